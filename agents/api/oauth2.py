"""The OAuth2 callback: where a provider sends the browser back after a tool's
sign-in (agents.oauth2), at /api/oauth2/callback/.

Register this URL (https://<your host>/api/oauth2/callback/) as the redirect URI of
the OAuth2 client a tool uses. The browser comes back signed in (a session cookie),
so the view is a page's, not the API's: it answers the credential request and sends
the browser to the session, whose turn goes on.
"""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.http import require_GET

from agents.oauth2 import answer_authorization
from project.errors import DomainError


def redirect_uri(request: HttpRequest) -> str:
    """The callback's absolute URL, as a provider must be told it."""
    return request.build_absolute_uri(reverse("oauth2-callback"))


@require_GET
@login_required
def oauth2_callback(request: HttpRequest) -> HttpResponse:
    """Answer the credential request the sign-in was for, then show its session."""
    refused = request.GET.get("error")
    if refused or not request.GET.get("code"):
        reason = request.GET.get("error_description") or refused or "no code"
        return _page(
            f"The sign-in did not complete ({reason}). The tool still "
            "waits: follow its sign-in link again.",
            status=400,
        )
    try:
        run = answer_authorization(
            user=request.user,
            state=request.GET.get("state", ""),
            response_uri=request.build_absolute_uri(),
        )
    except DomainError as error:
        return _page(str(error), status=error.status_code)
    page = reverse("frontend:session", kwargs={"session_id": run.session_id})
    return HttpResponseRedirect(page)


def _page(text: str, *, status: int) -> HttpResponse:
    return HttpResponse(text, status=status, content_type="text/plain; charset=utf-8")
