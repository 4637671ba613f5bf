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
"""

import inspect

from daphne.http_protocol import WebRequest
from twisted.web import http

_daphne_request_init = WebRequest.__init__
_installed = False


def install() -> bool:
    """Turn Twisted's own form parse off in Daphne's requests; True if in effect
    (idempotent). Process-wide: Daphne's server calls it as it loads the app."""
    global _installed
    if _installed:
        return True
    parameters = inspect.signature(http.Request.__init__).parameters
    if "parsePOSTFormSubmission" not in parameters:
        return False
    WebRequest.__init__ = _request_init
    _installed = True
    return True


def installed() -> bool:
    return _installed


def _request_init(self: WebRequest, *args, **kwargs) -> None:
    """Daphne's WebRequest, without Twisted's parse of form bodies."""
    kwargs["parsePOSTFormSubmission"] = False
    _daphne_request_init(self, *args, **kwargs)
