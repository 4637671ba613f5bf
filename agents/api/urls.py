from django.urls import include, path
from rest_framework.authtoken.views import obtain_auth_token
from rest_framework.routers import DefaultRouter

from agents.api.views import AgentViewSet, EventSchemaView, RunView, SessionViewSet

router = DefaultRouter()
router.register("agents", AgentViewSet, basename="agent")
router.register("sessions", SessionViewSet, basename="session")

urlpatterns = [
    path("auth/token/", obtain_auth_token, name="auth-token"),
    path("runs/<uuid:pk>/", RunView.as_view(), name="run-detail"),
    path("events/schema/", EventSchemaView.as_view(), name="event-schema"),
    path("", include(router.urls)),
]
