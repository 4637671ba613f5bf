"""The page an approve / reject link opens: a confirmation, then the decision.

GET shows what the link would decide and a form; only the form's POST decides
(mail scanners and link previews open links). Either refuses a forged, used or
expired link, a request already ended, another person's link and an approver no
longer allowed with a page that says so, and changes nothing. The token is in
the path: the pages send no Referer and are never cached.
"""

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods
from pydantic import ValidationError

from agents.inputs import DecisionInput
from agents.models import NoticeLink
from agents.notices import links
from agents.notices.errors import BadComment
from agents.notices.messages import notice_of
from project.errors import DomainError

TEMPLATE = "notices/link.html"


@never_cache
@require_http_methods(["GET", "POST"])
def link_page(request: HttpRequest, token: str) -> HttpResponse:
    """Confirm (GET) or decide (POST) what a notice's link was sent to decide."""
    if links.requires_sign_in(request.user):
        return redirect_to_login(request.get_full_path())
    try:
        if request.method == "POST":
            comment = _comment(request.POST.get("comment", ""))
            link = links.decide(token=token, viewer=request.user, comment=comment)
            return _page(request, link, state="decided")
        return _page(request, links.check(token=token, viewer=request.user))
    except DomainError as refusal:
        return _refused(request, refusal)


def _comment(text: str) -> str:
    """The comment as the answer path takes it, checked by the one decision model."""
    try:
        return DecisionInput(approved=True, comment=text).comment
    except ValidationError:
        raise BadComment() from None


def _page(request: HttpRequest, link: NoticeLink, *, state: str = "confirm"):
    context = {
        "state": state,
        "approved": link.approved,
        "notice": notice_of(link.request, None),
        "approver": link.user.get_username(),
    }
    return _private(render(request, TEMPLATE, context))


def _refused(request: HttpRequest, refusal: DomainError) -> HttpResponse:
    context = {"state": "refused", "message": str(refusal), "code": refusal.code}
    return _private(render(request, TEMPLATE, context, status=refusal.status_code))


def _private(response: HttpResponse) -> HttpResponse:
    response["Referrer-Policy"] = "no-referrer"
    return response
