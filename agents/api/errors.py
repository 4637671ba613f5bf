"""The one exception handler of the API: domain errors become clear 4xx answers.

Django's own 400, 403, 404 (a URL no route matches, such as a path id its converter
refuses) and 500 answer JSON under /api/ too, as the schema says every error does.
"""

from django.core.exceptions import (
    RequestDataTooBig,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import defaults
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from project.errors import DomainError


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        return _domain_response(exc)
    return drf_exception_handler(exc, context)


def _domain_response(exc: DomainError) -> Response:
    message = str(exc)
    body = {exc.field: [message]} if exc.field else {"detail": message}
    return Response(body, status=exc.status_code)


# Django's refusals of a body too big to read, in words (its own name settings).
TOO_MUCH = {
    RequestDataTooBig: gettext_lazy("The request body is too large."),
    TooManyFieldsSent: gettext_lazy("The request body has too many fields."),
    TooManyFilesSent: gettext_lazy("The request body has too many files."),
}


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's handler400: JSON for the API, the usual page elsewhere."""
    if _is_api(request):
        detail = str(TOO_MUCH.get(type(exception), _("Bad request.")))
        return JsonResponse({"detail": detail}, status=400)
    return defaults.bad_request(request, exception)


def forbidden(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's handler403: JSON for the API, the usual page elsewhere."""
    if _is_api(request):
        return JsonResponse({"detail": _("Forbidden.")}, status=403)
    return defaults.permission_denied(request, exception)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's handler404: JSON for the API, the usual page elsewhere."""
    if _is_api(request):
        return JsonResponse({"detail": _("Not found.")}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """Django's handler500: JSON for the API, the usual page elsewhere."""
    if _is_api(request):
        return JsonResponse({"detail": _("Server error.")}, status=500)
    return defaults.server_error(request)


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")
