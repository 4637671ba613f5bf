"""Django itself: the environment's readers (env, env_bool, env_list, the only
readers of os.environ), the data folder, the secret key and hosts, the apps and
middleware, URLs, templates, languages, static and media files, storages.
"""

import json
import os
import warnings
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env(name, default).split(",") if item.strip()]


DATA_DIR = Path(env("TOOLCRIB_DATA_DIR", str(BASE_DIR / "var")))
DATA_DIR.mkdir(parents=True, exist_ok=True)

_DEV_SECRET = "toolcrib-development-secret-key-change-me-in-production-0123456789"
SECRET_KEY = env("SECRET_KEY", _DEV_SECRET)
DEBUG = env_bool("DEBUG", False)
if SECRET_KEY == _DEV_SECRET and not env_bool("CI") and not DEBUG:
    warnings.warn(
        "SECRET_KEY is not set: using the development key. Set SECRET_KEY in production.",
        stacklevel=1,
    )
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    # API tokens stored as digests (agents/tokens.py); DRF's authtoken kept them
    # in clear (agents/migrations/0005_token_digests.py moved them).
    "knox",
    # Failed sign-ins counted per account and address (project/lockout.py).
    "axes",
    "drf_spectacular",
    "channels",
    "agents",
    "toolsets",
    # Eval sets and their runs (docs/evals.md), above governance.
    "evals",
    "frontend",
]
# The demo agents and users (demo/, `manage.py demo_setup`): `make run` and the
# tests set it; a production deployment leaves it unset.
TOOLCRIB_DEMO = env_bool("TOOLCRIB_DEMO", False)
if TOOLCRIB_DEMO:
    INSTALLED_APPS.append("demo")

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # An API query string with a NUL is a 400 before any view reads it.
    "agents.params.QueryTextMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The browser's language (Accept-Language); a signed-in person's own choice
    # replaces it below (agents.preferences, docs/i18n.md).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # A signed-in session whose account a check refuses (TOOLCRIB_ACCOUNT_CHECKS:
    # the sign-in provider let her go) ends before any view runs.
    "agents.account_checks.AccountCheckMiddleware",
    # Her chosen language and theme (agents.preferences), once she is known.
    "agents.preferences.PreferenceMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last: turns a sign-in form's locked-out attempt into a 429 (project/lockout.py).
    "axes.middleware.AxesMiddleware",
]
# Axes first: it refuses a locked-out account or address before any password check.
# Then passwords, unless TOOLCRIB_PASSWORD_LOGIN is off (below: a session signed in
# with a password then ends too), and the provider's sign-in, idle unless
# TOOLCRIB_OIDC_ISSUER is set (toolsets/sso/).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesBackend",
    "django.contrib.auth.backends.ModelBackend",
    "toolsets.sso.backend.ProviderBackend",
]

# Database sessions refusing a forged cookie before any query (project/session_store.py)
SESSION_ENGINE = "project.session_store"

ROOT_URLCONF = "project.urls"
WSGI_APPLICATION = None
ASGI_APPLICATION = "project.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # base.html's theme and language pickers (agents.preferences).
                "agents.preferences.display",
            ],
        },
    },
]


# The languages of the pages, the API's messages and the sockets' error frames
# (docs/i18n.md): each a catalog in locale/<code>/LC_MESSAGES/, compiled by
# scripts/compile-messages.py (`make install`). Named in their own language.
LANGUAGE_CODE = "en-us"
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
MEDIA_ROOT = Path(env("MEDIA_ROOT", str(DATA_DIR / "media")))
# Files: local folders under MEDIA_ROOT by default. Artifacts (agents' files) have
# their own alias, so they can move to any django-storages backend on their own:
# TOOLCRIB_ARTIFACT_STORAGE is its dotted class, TOOLCRIB_ARTIFACT_STORAGE_OPTIONS
# its OPTIONS as JSON (e.g. {"bucket_name": "toolcrib"}).
_FILE_SYSTEM_STORAGE = "django.core.files.storage.FileSystemStorage"
TOOLCRIB_ARTIFACT_STORAGE = env("TOOLCRIB_ARTIFACT_STORAGE", _FILE_SYSTEM_STORAGE)
STORAGES = {
    "default": {"BACKEND": _FILE_SYSTEM_STORAGE},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "artifacts": {
        "BACKEND": TOOLCRIB_ARTIFACT_STORAGE,
        "OPTIONS": json.loads(env("TOOLCRIB_ARTIFACT_STORAGE_OPTIONS", "{}"))
        or (
            {"location": str(MEDIA_ROOT / "artifacts")}
            if TOOLCRIB_ARTIFACT_STORAGE == _FILE_SYSTEM_STORAGE
            else {}
        ),
    },
}
# The frontend's pages (frontend/urls.py) sign people in and out.
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"
