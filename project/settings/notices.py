"""Notices of requests: mail, webhooks and the links in them."""

from django.core.exceptions import ImproperlyConfigured

from project.settings.base import env, env_bool

# Notices of requests (agents/notices/, docs/notices.md): mail through Django's
# SMTP backend when EMAIL_HOST is set (else no mail goes), webhooks to the
# destinations staff set up. Links in them are absolute: TOOLCRIB_PUBLIC_URL.
EMAIL_HOST = env("EMAIL_HOST").strip()
EMAIL_PORT = int(env("EMAIL_PORT", "25"))
EMAIL_HOST_USER = env("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS")
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL")
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("Set EMAIL_USE_TLS or EMAIL_USE_SSL, not both.")
EMAIL_TIMEOUT = float(env("EMAIL_TIMEOUT", "10"))
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", "Toolcrib <toolcrib@localhost>")
EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
TOOLCRIB_PUBLIC_URL = env("TOOLCRIB_PUBLIC_URL", "http://localhost:8000").strip()
if not TOOLCRIB_PUBLIC_URL.startswith(("https://", "http://")):
    raise ImproperlyConfigured(
        "TOOLCRIB_PUBLIC_URL must be the site's http:// or https:// address."
    )
TOOLCRIB_PUBLIC_URL = TOOLCRIB_PUBLIC_URL.rstrip("/")
# Attempts of one notice, the first retry's wait (each next one four times the
# last), and how long a webhook may take before its attempt counts as failed.
TOOLCRIB_NOTICE_ATTEMPTS = int(env("TOOLCRIB_NOTICE_ATTEMPTS", "3"))
TOOLCRIB_NOTICE_RETRY_SECONDS = float(env("TOOLCRIB_NOTICE_RETRY_SECONDS", "30"))
TOOLCRIB_NOTICE_WEBHOOK_TIMEOUT = float(env("TOOLCRIB_NOTICE_WEBHOOK_TIMEOUT", "5"))
if TOOLCRIB_NOTICE_ATTEMPTS < 1 or TOOLCRIB_NOTICE_WEBHOOK_TIMEOUT <= 0:
    raise ImproperlyConfigured(
        "TOOLCRIB_NOTICE_ATTEMPTS must be 1 or more, and "
        "TOOLCRIB_NOTICE_WEBHOOK_TIMEOUT more than 0."
    )
# An approve / reject link opened asks its approver to sign in first (off: the
# link alone is her word); it lives as long as its request, at most this long.
TOOLCRIB_NOTICE_LINKS_SIGN_IN = env_bool("TOOLCRIB_NOTICE_LINKS_SIGN_IN", True)
TOOLCRIB_NOTICE_LINK_MAX_AGE = float(
    env("TOOLCRIB_NOTICE_LINK_MAX_AGE", str(7 * 24 * 3600))
)
