"""Pages: each renders a shell that its ES module fills from the API and the websockets.

No business logic lives here: access is decided by the API each page calls; these
views only require a signed-in user (or staff) so nobody gets an empty shell, and
the session page asks the access check the root URLconf hands it (the API's own
access_session()) so it is there only for someone who may see the session.
"""

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from project.errors import DomainError, NotFoundError, PasswordSignInOff

View = Callable[..., HttpResponse]
# The session if `user` may see it; else raises NotFoundError.
SessionAccess = Callable[..., object]
# Checks that `user` (maybe anonymous) may open the link `token`; else raises a
# DomainError: 404 no such link, 410 revoked or expired, 401 sign in first.
ShareAccess = Callable[..., object]


def staff_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Signed in, and staff: anyone else gets a readable 403 page."""

    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_staff:
            return render(request, "frontend/forbidden.html", status=403)
        return view(request, *args, **kwargs)

    return wrapped


def _page(template: str, nav: str, **context) -> Callable[..., HttpResponse]:
    def view(request: HttpRequest) -> HttpResponse:
        return render(request, template, {"nav": nav, **context})

    return view


home = login_required(_page("frontend/home.html", "home", sidebar="home"))
inbox = login_required(_page("frontend/inbox.html", "inbox"))
prompts = login_required(_page("frontend/prompts.html", "prompts"))
overview = login_required(_page("frontend/overview.html", "overview"))
evals = login_required(_page("frontend/evals.html", "evals"))
audit = staff_required(_page("frontend/audit.html", "audit"))
firehose = staff_required(_page("frontend/firehose.html", "firehose"))
agents = staff_required(_page("frontend/agents.html", "agents"))
groups = staff_required(_page("frontend/groups.html", "groups"))
notices = staff_required(_page("frontend/notices.html", "notices"))
people = staff_required(_page("frontend/people.html", "people"))
changes = staff_required(_page("frontend/changes.html", "audit"))
models = staff_required(_page("frontend/models.html", "models"))
tool_servers = staff_required(_page("frontend/tool_servers.html", "tool-servers"))


@login_required
def eval_runs(request: HttpRequest, set_id: int) -> HttpResponse:
    """A set's run history (the API decides who may read it)."""
    context = {"nav": "evals", "mode": "history", "set_id": set_id}
    return render(request, "frontend/evalruns.html", context)


@login_required
def eval_compare(request: HttpRequest, run_a: int, run_b: int) -> HttpResponse:
    """Two runs side by side (the API decides who may read them)."""
    context = {"nav": "evals", "mode": "compare", "run_a": run_a, "run_b": run_b}
    return render(request, "frontend/evalruns.html", context)


@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    """Her tokens, and the link of her account to the sign-in provider if one is set."""
    provider = (
        settings.TOOLCRIB_OIDC_PROVIDER_NAME if settings.TOOLCRIB_OIDC_ISSUER else ""
    )
    return render(
        request, "frontend/tokens.html", {"nav": "tokens", "provider": provider}
    )


class LoginView(auth_views.LoginView):
    """/login/: the password form, and "Sign in with <provider>" when one is set up.

    With passwords switched off (TOOLCRIB_PASSWORD_LOGIN) the page offers only the
    provider, and a password posted anyway is refused before any check.
    """

    template_name = "frontend/login.html"
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["password_login"] = settings.TOOLCRIB_PASSWORD_LOGIN
        context["provider"] = (
            settings.TOOLCRIB_OIDC_PROVIDER_NAME
            if settings.TOOLCRIB_OIDC_ISSUER
            else ""
        )
        context["provider_failed"] = self.request.GET.get("sso") == "failed"
        return context

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if settings.TOOLCRIB_PASSWORD_LOGIN:
            return super().post(request, *args, **kwargs)
        refusal = PasswordSignInOff(settings.TOOLCRIB_OIDC_PROVIDER_NAME)
        context = self.get_context_data(refusal=str(refusal))
        return self.render_to_response(context, status=refusal.status_code)


def session_page(access: SessionAccess) -> View:
    """One session's page, for whoever `access` lets see it; anyone else gets a 404."""

    @login_required
    def session(request: HttpRequest, session_id: str) -> HttpResponse:
        try:
            access(user=request.user, session_id=session_id)
        except NotFoundError:
            raise Http404("No such session.") from None
        return render(
            request,
            "frontend/session.html",
            {"nav": "home", "session_id": session_id, "sidebar": "session"},
        )

    return session


def shared_page(access: ShareAccess) -> View:
    """A shared session's read-only page (agents.shares): for whoever `access` lets
    open the link; anyone else reads why not, or is sent to sign in first."""

    def shared(request: HttpRequest, token: str) -> HttpResponse:
        try:
            access(user=request.user, token=token)
        except DomainError as refusal:
            if refusal.status_code == 401:
                return redirect_to_login(request.get_full_path())
            status = 410 if refusal.status_code == 410 else 404
            title = _("This link has ended") if status == 410 else _("No such link")
            context = {"title": title, "reason": str(refusal)}
            return render(request, "frontend/share_gone.html", context, status=status)
        return render(request, "frontend/shared.html", {"nav": "", "token": token})

    return shared


@staff_required
def access(request: HttpRequest) -> HttpResponse:
    """The permission matrix: its groups, users, tools and grants come from the API."""
    return render(request, "frontend/access.html", {"nav": "access"})
