from django.urls import include, path
from rest_framework.routers import DefaultRouter, SimpleRouter

from agents.api.agent_views import AgentViewSet
from agents.api.approvals import ApprovalViewSet
from agents.api.auth import ObtainTokenView
from agents.api.changes import ChangeListView
from agents.api.credentials import AuthRequestViewSet, CredentialViewSet
from agents.api.model_grants import ModelGrantViewSet
from agents.api.notices import DeliveryViewSet, DestinationViewSet, PreferencesView
from agents.api.oauth2 import oauth2_callback
from agents.api.preferences import MyPreferencesView
from agents.api.prompts import PromptViewSet
from agents.api.providers import ProviderViewSet
from agents.api.requests import RequestViewSet
from agents.api.retention import RetentionView
from agents.api.runs import (
    RegenerateView,
    RunCancelView,
    SessionQueueCancelView,
    SessionQueueView,
)
from agents.api.shares import (
    SessionSharesView,
    SessionShareView,
    SessionShareViewsView,
    SharedEventsView,
    SharedForkView,
    SharedSessionView,
    ShareSettingsView,
)
from agents.api.traces import RunTraceView
from agents.api.usage import BudgetViewSet, UsageView
from agents.api.views import (
    CallListView,
    EventSchemaView,
    MemorySearchView,
    RunView,
    SessionViewSet,
)


class Router(DefaultRouter):
    """The API root at /api/, without `.json` suffix routes: a name may hold a dot,
    and the schema has one path per operation."""

    include_format_suffixes = False


# Path converters type each id: <id:pk> is ASCII digits in the bigint range.
router = Router(use_regex_path=False)
router.register("agents", AgentViewSet, basename="agent")
router.register("sessions", SessionViewSet, basename="session")
router.register("budgets", BudgetViewSet, basename="budget")
router.register("providers", ProviderViewSet, basename="provider")
router.register("model-grants", ModelGrantViewSet, basename="model-grant")
router.register("auth-requests", AuthRequestViewSet, basename="auth-request")
router.register("credentials", CredentialViewSet, basename="credential")
router.register("requests", RequestViewSet, basename="request")
router.register("prompts", PromptViewSet, basename="prompt")
router.register("notices/webhooks", DestinationViewSet, basename="notice-webhook")
router.register("notices/deliveries", DeliveryViewSet, basename="notice-delivery")
# Approvals are served here since they are requests (agents.requests), and kept out
# of the API root's listing, where they were never named.
unlisted = SimpleRouter(use_regex_path=False)
unlisted.register("approvals", ApprovalViewSet, basename="approval")

urlpatterns = [
    path("auth/token/", ObtainTokenView.as_view(), name="auth-token"),
    path("runs/<uuid:pk>/", RunView.as_view(), name="run-detail"),
    path("runs/<uuid:pk>/cancel/", RunCancelView.as_view(), name="run-cancel"),
    path("runs/<uuid:pk>/trace/", RunTraceView.as_view(), name="run-trace"),
    path(
        "sessions/<name:pk>/regenerate/",
        RegenerateView.as_view(),
        name="session-regenerate",
    ),
    path(
        "sessions/<name:pk>/shares/", SessionSharesView.as_view(), name="session-shares"
    ),
    path(
        "sessions/<name:pk>/shares/<id:share_id>/",
        SessionShareView.as_view(),
        name="session-share",
    ),
    path(
        "sessions/<name:pk>/shares/<id:share_id>/views/",
        SessionShareViewsView.as_view(),
        name="session-share-views",
    ),
    path("share-settings/", ShareSettingsView.as_view(), name="share-settings"),
    path("shared/<str:token>/", SharedSessionView.as_view(), name="shared"),
    path(
        "shared/<str:token>/events/", SharedEventsView.as_view(), name="shared-events"
    ),
    path("shared/<str:token>/fork/", SharedForkView.as_view(), name="shared-fork"),
    path("sessions/<name:pk>/queue/", SessionQueueView.as_view(), name="session-queue"),
    path(
        "sessions/<name:pk>/queue/cancel/",
        SessionQueueCancelView.as_view(),
        name="session-queue-cancel",
    ),
    path("events/schema/", EventSchemaView.as_view(), name="event-schema"),
    path("usage/", UsageView.as_view(), name="usage"),
    path("notices/preferences/", PreferencesView.as_view(), name="notice-preferences"),
    path("me/preferences/", MyPreferencesView.as_view(), name="my-preferences"),
    path("calls/", CallListView.as_view(), name="call-list"),
    path("memory/", MemorySearchView.as_view(), name="memory-search"),
    path("retention/", RetentionView.as_view(), name="retention"),
    path("changes/", ChangeListView.as_view(), name="change-list"),
    # Where OAuth2 providers send the browser back (agents/api/oauth2.py).
    path("oauth2/callback/", oauth2_callback, name="oauth2-callback"),
    path("", include(router.urls)),
    path("", include(unlisted.urls)),
]
