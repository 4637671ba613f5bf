"""The frontend's pages, at the root: `/`, `/login/`, `/sessions/<id>/`, `/staff/...`."""

from django.contrib.auth import views as auth_views
from django.urls import path

import agents.params  # noqa: F401 - registers the <name:...> path converter
from frontend import views

app_name = "frontend"

urlpatterns = [
    path("", views.home, name="home"),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="frontend/login.html", redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("sessions/<name:session_id>/", views.session, name="session"),
    path("inbox/", views.inbox, name="inbox"),
    path("overview/", views.overview, name="overview"),
    path("staff/access/", views.access, name="access"),
    path("staff/audit/", views.audit, name="audit"),
    path("staff/firehose/", views.firehose, name="firehose"),
    path("staff/agents/", views.agents, name="agents"),
]
