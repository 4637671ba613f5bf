"""/oidc/authenticate/, /oidc/callback/ (mozilla-django-oidc's URL names) and
/oidc/link/."""

from django.urls import path

from toolsets.sso.views import (
    ProviderCallbackView,
    ProviderLinkView,
    ProviderSignInView,
)

urlpatterns = [
    path(
        "callback/",
        ProviderCallbackView.as_view(),
        name="oidc_authentication_callback",
    ),
    path(
        "authenticate/",
        ProviderSignInView.as_view(),
        name="oidc_authentication_init",
    ),
    path("link/", ProviderLinkView.as_view(), name="oidc_link"),
]
