"""Single sign-on with OpenID Connect: mozilla-django-oidc, configured from settings.

`discovery` finds the provider's endpoints from its issuer, `accounts` turns the
claims of a sign-in into a Toolcrib user and her groups, `backend` and `views` fit
both into mozilla-django-oidc's flow, and `urls` serves it at /oidc/.
"""
