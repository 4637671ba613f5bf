"""Websocket URL routes."""

from django.urls import path

from agents.realtime.consumers import (
    AgentStreamConsumer,
    FirehoseConsumer,
    InboxConsumer,
    SessionStreamConsumer,
)

websocket_urlpatterns = [
    path("ws/sessions/<str:session_id>/", SessionStreamConsumer.as_asgi()),
    path("ws/agents/<str:agent_name>/", AgentStreamConsumer.as_asgi()),
    path("ws/firehose/", FirehoseConsumer.as_asgi()),
    path("ws/inbox/", InboxConsumer.as_asgi()),
]
