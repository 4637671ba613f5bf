"""The project's URLs and error handlers, with views that fail, under /api/ and not."""

from django.core.exceptions import PermissionDenied
from django.urls import path

from project import urls


def fails(request):
    raise RuntimeError("a bug")


def refuses(request):
    raise PermissionDenied


urlpatterns = [
    path("api/fails/", fails),
    path("api/refuses/", refuses),
    path("fails/", fails),
    *urls.urlpatterns,
]
handler400 = urls.handler400
handler403 = urls.handler403
handler404 = urls.handler404
handler500 = urls.handler500
