"""What Daphne does with input it refuses before the app sees it, made to answer.

Written for Daphne 4.2, Twisted 26.10 and autobahn 26.11; install() checks what it
relies on and leaves Daphne as it is when a version moved it.

- **Form bodies.** Twisted's `http.Request` parses every POST body that says it is
  multipart/form-data into `request.args`, which Daphne never reads, and answers a
  body it cannot parse with a bare 400 without a body, before Daphne or Django
  see it: every POST operation, authenticated or not, answered a malformed
  multipart body that way. The app parses bodies itself (DRF's parsers, with field
  errors in JSON), so Twisted's parse is turned off (its `parsePOSTFormSubmission`
  argument, which also spares every upload a second parse).
- **Websocket messages too big to read.** Autobahn, under Daphne, stops reading a
  message past its payload limit, and by default drops the TCP connection without
  a close frame: a client saw its socket die and could not tell why. Daphne's
  protocol now fails such a connection the way RFC 6455 describes, with a close
  frame: code 1009 (message too big) and autobahn's reason, "received WebSocket
  message size N exceeds payload limit of M octets". The limit is
  TOOLCRIB_WS_MAX_MESSAGE_BYTES (default 1 MiB, read at each connection; Daphne's
  own --websocket-max-message-size no longer counts). Below it, a frame larger
  than TOOLCRIB_WS_MAX_FRAME_BYTES reaches the consumer, which answers an error
  frame and keeps the socket (agents/realtime/consumers.py). The payload past the
  limit is read and thrown away, never kept, until the client answers the close or
  autobahn's close handshake timeout (1 s) drops it.

Off (`TOOLCRIB_PATCHES_OFF=daphne_input`): asgi.py does not install it; Twisted
parses form bodies and autobahn drops a connection past its limit, as they do.
"""

import inspect

from daphne.http_protocol import WebRequest
from daphne.ws_protocol import WebSocketProtocol
from django.conf import settings
from twisted.web import http

WRITTEN_FOR = {"daphne": "4.2", "twisted": "26.10", "autobahn": "26.11"}

# The options of autobahn's protocol set here (its CONFIG_ATTRS).
SOCKET_OPTIONS = ("failByDrop", "maxMessagePayloadSize", "maxFramePayloadSize")

_daphne_request_init = WebRequest.__init__
_installed = False


def install() -> bool:
    """Turn Twisted's own form parse off in Daphne's requests, and close a socket
    whose message is too big with 1009; True if in effect (idempotent).
    Process-wide: Daphne's server calls it as it loads the app."""
    global _installed
    if _installed:
        return True
    parameters = inspect.signature(http.Request.__init__).parameters
    if "parsePOSTFormSubmission" not in parameters or not all(
        name in WebSocketProtocol.CONFIG_ATTRS for name in SOCKET_OPTIONS
    ):
        return False
    WebRequest.__init__ = _request_init
    # Autobahn copies each option from the factory at connection only when the
    # protocol has none of its own: these, on the class, are the protocol's own.
    WebSocketProtocol.failByDrop = False
    WebSocketProtocol.maxMessagePayloadSize = property(_message_limit)
    WebSocketProtocol.maxFramePayloadSize = property(_message_limit)
    _installed = True
    return True


def installed() -> bool:
    return _installed


def _message_limit(protocol: WebSocketProtocol) -> int:
    return settings.TOOLCRIB_WS_MAX_MESSAGE_BYTES


def _request_init(self: WebRequest, *args, **kwargs) -> None:
    """Daphne's WebRequest, without Twisted's parse of form bodies."""
    kwargs["parsePOSTFormSubmission"] = False
    _daphne_request_init(self, *args, **kwargs)
