"""`/api/gateway/`: the MCP gateway's personal access tokens (toolsets/api/gateway.py)."""

from django.urls import path

import project.converters  # noqa: F401 - registers the <id:...> path converter
from toolsets.api.gateway import GatewayTokensView, GatewayTokenView

urlpatterns = [
    path("tokens/", GatewayTokensView.as_view(), name="gateway-tokens"),
    path("tokens/<id:pk>/", GatewayTokenView.as_view(), name="gateway-token"),
]
