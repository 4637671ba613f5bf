"""project.patches.daphne_input under threads: installing it from many threads at once
leaves Daphne's own request set-up behind the patch, never the patch itself.

Daphne installs it as it loads the application (project/asgi.py); any other
importer of project.asgi may too, on a thread of its own. Safe without a lock:
Daphne's own __init__ is kept as the module is imported, and every install sets
the same values.
"""

from daphne.http_protocol import WebRequest
from daphne.ws_protocol import WebSocketProtocol

from project.patches import daphne_input
from tests.threads import at_once

ROUNDS = 30
DAPHNES_OWN = daphne_input._daphne_request_init


def test_threads_installing_at_once_keep_daphnes_own_request_behind_the_patch(
    monkeypatch,
):
    for _ in range(ROUNDS):
        # As before any install.
        monkeypatch.setattr(WebRequest, "__init__", DAPHNES_OWN)
        for name in daphne_input.SOCKET_OPTIONS:
            monkeypatch.setattr(WebSocketProtocol, name, None, raising=False)
        monkeypatch.setattr(daphne_input, "_installed", False)

        installed = at_once(lambda i: daphne_input.install())

        assert installed == [True] * 8
        assert WebRequest.__init__ is daphne_input._request_init
        assert daphne_input._daphne_request_init is DAPHNES_OWN
        assert WebSocketProtocol.failByDrop is False
