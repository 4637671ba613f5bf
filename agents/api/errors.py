"""The one exception handler of the API: domain errors become clear 4xx answers."""

from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
    return drf_exception_handler(exc, context)
