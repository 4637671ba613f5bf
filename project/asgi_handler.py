"""Django's ASGI handler, answering a request it cannot even build in JSON under /api/.

Django answers a request whose headers it cannot read before any view or
middleware runs: a bare 400 for a query string that is not UTF-8, a plain-text
413 for a body past DATA_UPLOAD_MAX_MEMORY_SIZE, and nothing at all for a
Content-Type parameter in an unknown charset (RFC 2231, `boundary*=bogus''x`),
whose ValueError escaped to Daphne's 500 page. Under /api/ each is a JSON
`{"detail": ...}`, as every API answer is; elsewhere Django's own answer stays.
"""

from django.core.exceptions import RequestDataTooBig
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpResponse, HttpResponseBadRequest, JsonResponse

WHY = {
    400: "Bad request: the query string is not UTF-8.",
    413: "The request body is too large.",
}


class JsonErrorsASGIHandler(ASGIHandler):
    """ASGIHandler, its refusals of an unreadable request in JSON under /api/."""

    def create_request(self, scope, body_file):
        try:
            request, refusal = super().create_request(scope, body_file)
        except ValueError as exc:  # a header parameter in an unknown charset
            return None, _refusal(
                scope, HttpResponseBadRequest(), f"Bad request: {exc}"
            )
        except RequestDataTooBig:
            return None, _refusal(scope, HttpResponse(status=413), WHY[413])
        if refusal is None:
            return request, None
        return None, _refusal(
            scope, refusal, WHY.get(refusal.status_code, "Bad request.")
        )


def _refusal(scope, refusal: HttpResponse, why: str) -> HttpResponse:
    if not scope.get("path", "").startswith("/api/"):
        return refusal
    return JsonResponse({"detail": why}, status=refusal.status_code)
