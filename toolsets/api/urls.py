from django.urls import include, path
from rest_framework.routers import SimpleRouter

import agents.client_input  # noqa: F401 - registers the <id:...> and <name:...> converters
from toolsets.api.activation import (
    SessionToolsetsView,
    SessionToolsetView,
    SessionToolsView,
)
from toolsets.api.audit import OutcomeGroupsView, ToolCallSummaryView
from toolsets.api.groups import GroupViewSet
from toolsets.api.imports import ImportViewSet
from toolsets.api.inspector import EventInspectView
from toolsets.api.users import InviteViewSet, UserViewSet
from toolsets.api.views import (
    AccessView,
    AgentToolsView,
    GrantViewSet,
    ToolCallViewSet,
    ToolsetViewSet,
    ToolViewSet,
)

# Path converters type each id: <id:pk> is ASCII digits in the bigint range.
router = SimpleRouter(use_regex_path=False)
router.register("toolsets", ToolsetViewSet, basename="toolset")
router.register("tools", ToolViewSet, basename="tool")
router.register("grants", GrantViewSet, basename="grant")
router.register("tool-calls", ToolCallViewSet, basename="tool-call")
router.register("imports", ImportViewSet, basename="import")
router.register("groups", GroupViewSet, basename="group")
router.register("users", UserViewSet, basename="user")
router.register("invites", InviteViewSet, basename="invite")

urlpatterns = [
    path("access/", AccessView.as_view(), name="access"),
    # Before the router's tool-calls/<id:pk>/ (an id is digits, so no clash).
    path(
        "tool-calls/summary/", ToolCallSummaryView.as_view(), name="tool-call-summary"
    ),
    path(
        "tool-calls/outcomes/", OutcomeGroupsView.as_view(), name="tool-call-outcomes"
    ),
    path("agents/<name:name>/tools/", AgentToolsView.as_view(), name="agent-tools"),
    path(
        "sessions/<name:pk>/toolsets/",
        SessionToolsetsView.as_view(),
        name="session-toolsets",
    ),
    path("sessions/<name:pk>/tools/", SessionToolsView.as_view(), name="session-tools"),
    path(
        "sessions/<name:pk>/events/<id:seq>/inspect/",
        EventInspectView.as_view(),
        name="event-inspect",
    ),
    path(
        "sessions/<name:pk>/toolsets/<name:name>/",
        SessionToolsetView.as_view(),
        name="session-toolset",
    ),
    path("", include(router.urls)),
]
