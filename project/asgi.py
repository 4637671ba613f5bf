"""ASGI entry point: HTTP through Django, websockets through Channels."""

import os

import django
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
# Django must be set up before consumers (and their models) are imported; then
# get_asgi_application()'s handler, with its refusals in JSON under /api/.
django.setup(set_prefix=False)

from project.asgi_handler import JsonErrorsASGIHandler  # noqa: E402

django_asgi_app = JsonErrorsASGIHandler()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from agents.a2a.server import A2AApp  # noqa: E402
from agents.realtime.routing import websocket_urlpatterns  # noqa: E402
from agents.realtime.wsauth import WebsocketAuthStack  # noqa: E402
from agents.retention import schedule as retention  # noqa: E402
from agents.turns import sweep  # noqa: E402
from project import garbage, patches  # noqa: E402
from project.patches import daphne_input, socket_writes  # noqa: E402
from toolsets.gateway.server import GatewayApp  # noqa: E402

application = ProtocolTypeRouter(
    {
        # Static files are served by the app itself: the embedded default needs no proxy.
        # /mcp is the tool gateway's MCP server (toolsets/gateway/, docs/gateway.md);
        # /a2a/<agent>/ serves agents over A2A (agents/a2a/, docs/a2a.md).
        "http": A2AApp(GatewayApp(ASGIStaticFilesHandler(django_asgi_app))),
        "websocket": WebsocketAuthStack(URLRouter(websocket_urlpatterns)),
    }
)

# A server that runs turns itself (no broker) sweeps the runs a dead process left:
# the embedded one, as it starts, those of its own previous life.
if settings.TOOLCRIB_EXECUTOR == "inline":
    sweep.start()
    # ... and removes what is older than the team keeps (Celery beat does, with a
    # broker: docs/retention.md).
    retention.start()
# Under Daphne, a frame with nothing queued before it goes to its socket at once.
if patches.is_on("socket_writes"):
    socket_writes.install()
# Daphne leaves bad bodies to the app, which answers them in JSON.
if patches.is_on("daphne_input"):
    daphne_input.install()
# The code is loaded: what start-up made is kept out of every collection from now on.
garbage.tune()
