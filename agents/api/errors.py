"""The one exception handler of the API: domain errors become clear 4xx answers."""

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from agents.errors import DomainError


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        return _domain_response(exc)
    return drf_exception_handler(exc, context)


def _domain_response(exc: DomainError) -> Response:
    message = str(exc)
    body = {exc.field: [message]} if exc.field else {"detail": message}
    return Response(body, status=exc.status_code)
