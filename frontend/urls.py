"""The frontend's pages, at the root: `/`, `/login/`, `/sessions/<id>/`, `/staff/...`.

The frontend knows the apps only over HTTP and websockets; the one thing a page
needs from them on the server, whether the signed-in user may see a session, is
handed in by the root URLconf (project/urls.py), the composition root.
"""

from django.contrib.auth import views as auth_views
from django.urls import path

import project.converters  # noqa: F401 - registers the <name:...> path converter
from frontend import views

app_name = "frontend"


def pages(
    *, session_access: views.SessionAccess, share_access: views.ShareAccess
) -> tuple[list, str]:
    """The pages, for include(); `session_access` decides who sees a session page,
    `share_access` who opens a shared link."""
    patterns = _patterns(
        views.session_page(session_access), views.shared_page(share_access)
    )
    return patterns, app_name


def _patterns(session: views.View, shared: views.View) -> list:
    return [
        path("", views.home, name="home"),
        path("login/", views.LoginView.as_view(), name="login"),
        path("logout/", auth_views.LogoutView.as_view(), name="logout"),
        path("sessions/<name:session_id>/", session, name="session"),
        path("shared/<str:token>/", shared, name="shared"),
        path("inbox/", views.inbox, name="inbox"),
        path("prompts/", views.prompts, name="prompts"),
        path("overview/", views.overview, name="overview"),
        path("tokens/", views.tokens, name="tokens"),
        path("evals/", views.evals, name="evals"),
        path("evals/sets/<int:set_id>/runs/", views.eval_runs, name="eval-runs"),
        path(
            "evals/runs/<int:run_a>/compare/<int:run_b>/",
            views.eval_compare,
            name="eval-compare",
        ),
        path("staff/access/", views.access, name="access"),
        path("staff/audit/", views.audit, name="audit"),
        path("staff/firehose/", views.firehose, name="firehose"),
        path("staff/agents/", views.agents, name="agents"),
        path("staff/groups/", views.groups, name="groups"),
        path("staff/notices/", views.notices, name="notices"),
        path("staff/people/", views.people, name="people"),
        path("staff/changes/", views.changes, name="changes"),
        path("staff/models/", views.models, name="models"),
        path("staff/tool-servers/", views.tool_servers, name="tool-servers"),
    ]
