"""The page an invitation's link opens (`/invite/<token>/`): the invitee chooses
her username and password, and is signed in.

GET shows the form; only its POST makes the account. Both refuse a forged, used,
withdrawn or expired link with a page that says so, and change nothing. The
username and password are checked by Django's own UserCreationForm: a username
taken (letter case aside), two passwords that differ, and every rule of
AUTH_PASSWORD_VALIDATORS, each next to its field. The token is in the path: the
page sends no Referer to another site and is never cached.
"""

from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.password_validation import password_validators_help_texts
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from project.errors import DomainError
from toolsets.people import invites

TEMPLATE = "people/invite.html"
PASSWORD_BACKEND = "django.contrib.auth.backends.ModelBackend"


@never_cache
@require_http_methods(["GET", "POST"])
def invite_page(request: HttpRequest, token: str) -> HttpResponse:
    """Show (GET) or accept (POST) an invitation."""
    try:
        invite = invites.check(token=token)
        form = UserCreationForm(request.POST if request.method == "POST" else None)
        if not form.is_valid():
            context = {
                "form": form,
                "invite": invite,
                "password_rules": password_validators_help_texts(),
            }
            return _private(render(request, TEMPLATE, context))
        user = invites.accept(
            token=token,
            username=form.cleaned_data["username"],
            password=form.cleaned_data["password1"],
        )
    except DomainError as refusal:
        context = {"refused": True, "message": str(refusal), "code": refusal.code}
        return _private(render(request, TEMPLATE, context, status=refusal.status_code))
    login(request, user, backend=PASSWORD_BACKEND)
    return redirect("frontend:home")


def _private(response: HttpResponse) -> HttpResponse:
    # The token never leaves the site in a Referer; "no-referrer" would also make
    # the form's Origin "null", which Django's CSRF check refuses.
    response["Referrer-Policy"] = "same-origin"
    return response
