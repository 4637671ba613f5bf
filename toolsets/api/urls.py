from django.urls import include, path
from rest_framework.routers import SimpleRouter

from toolsets.api.approvals import ApprovalViewSet
from toolsets.api.views import (
    AccessView,
    AgentToolsView,
    GrantViewSet,
    ToolCallViewSet,
    ToolsetViewSet,
    ToolViewSet,
)

router = SimpleRouter()
router.register("toolsets", ToolsetViewSet, basename="toolset")
router.register("tools", ToolViewSet, basename="tool")
router.register("grants", GrantViewSet, basename="grant")
router.register("tool-calls", ToolCallViewSet, basename="tool-call")
router.register("approvals", ApprovalViewSet, basename="approval")

urlpatterns = [
    path("access/", AccessView.as_view(), name="access"),
    path("agents/<str:name>/tools/", AgentToolsView.as_view(), name="agent-tools"),
    path("", include(router.urls)),
]
