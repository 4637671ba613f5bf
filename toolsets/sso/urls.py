"""/oidc/authenticate/ and /oidc/callback/, under mozilla-django-oidc's URL names."""

from django.urls import path

from toolsets.sso.views import ProviderCallbackView, ProviderSignInView

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
]
