from django.urls import include, path
from rest_framework.routers import SimpleRouter

from toolsets.api.activation import SessionToolsetsView, SessionToolsetView
from toolsets.api.approvals import ApprovalViewSet
from toolsets.api.imports import ImportViewSet
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
router.register("approvals", ApprovalViewSet, basename="approval")
router.register("imports", ImportViewSet, basename="import")

urlpatterns = [
    path("access/", AccessView.as_view(), name="access"),
    path("agents/<str:name>/tools/", AgentToolsView.as_view(), name="agent-tools"),
    path(
        "sessions/<str:pk>/toolsets/",
        SessionToolsetsView.as_view(),
        name="session-toolsets",
    ),
    path(
        "sessions/<str:pk>/toolsets/<str:name>/",
        SessionToolsetView.as_view(),
        name="session-toolset",
    ),
    path("", include(router.urls)),
]
