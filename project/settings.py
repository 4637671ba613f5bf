"""Toolcrib settings: every value comes from the environment, with an embedded default.

The README lists every variable. Nothing else in the code base reads os.environ.
"""

import os
import warnings
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


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
    "rest_framework.authtoken",
    "drf_spectacular",
    "channels",
    "agents",
    "toolsets",
    "frontend",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

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
            ],
        },
    },
]

# Database: SQLite file by default, anything dj-database-url understands otherwise.
DATABASE_URL = env("DATABASE_URL", f"sqlite:///{DATA_DIR / 'toolcrib.sqlite3'}")
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE transactions take the write lock up front, so concurrent turns queue
    # on the lock instead of failing to upgrade a read lock ("database is locked").
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}
    # A file (not :memory:) so turn threads share it; one per process so parallel
    # test runs on one machine never share a database.
    DATABASES["default"]["TEST"] = {
        "NAME": str(DATA_DIR / f"test-{os.getpid()}.sqlite3")
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis: channel layer and cache when set; in-memory otherwise.
REDIS_URL = env("REDIS_URL")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "capacity": 1000, "expiry": 30},
        }
    }
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Celery: turns run in workers when a broker is set, inline in the server otherwise.
CELERY_BROKER_URL = env("CELERY_BROKER_URL")
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
if CELERY_BROKER_URL and not REDIS_URL:
    raise ImproperlyConfigured(
        "CELERY_BROKER_URL is set but REDIS_URL is not: events from workers could "
        "never reach the web processes. Set REDIS_URL too."
    )
TOOLCRIB_EXECUTOR = "celery" if CELERY_BROKER_URL else "inline"

# Agents and models.
TOOLCRIB_DEFAULT_MODEL = env("TOOLCRIB_DEFAULT_MODEL", "offline/demo")
TOOLCRIB_AGENTS = [
    "agents.demo.weather.weather_sentiment",
    "agents.demo.support.customer_support",
    "agents.demo.preferences.preferences",
    "agents.demo.calculator.calculator",
    *env_list("TOOLCRIB_EXTRA_AGENTS"),
]
TOOLCRIB_TOOL_THREADS = int(env("TOOLCRIB_TOOL_THREADS", "4"))
TOOLCRIB_TURN_TIMEOUT = float(env("TOOLCRIB_TURN_TIMEOUT", "300"))
TOOLCRIB_WAIT_TIMEOUT = float(env("TOOLCRIB_WAIT_TIMEOUT", "120"))
TOOLCRIB_MAX_MESSAGE_CHARS = int(env("TOOLCRIB_MAX_MESSAGE_CHARS", "20000"))
TOOLCRIB_WS_MAX_FRAME_BYTES = int(env("TOOLCRIB_WS_MAX_FRAME_BYTES", "65536"))
TOOLCRIB_CREDENTIAL_KEY = env("TOOLCRIB_CREDENTIAL_KEY")

# The offline model and litellm must never reach the network for a price table.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("ADK_SUPPRESS_EXPERIMENTAL_FEATURE_WARNINGS", "true")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": None,
    "EXCEPTION_HANDLER": "agents.api.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Toolcrib API",
    "DESCRIPTION": "Run ADK agents and govern their tools.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
}

AUTH_PASSWORD_VALIDATORS = []
PASSWORD_HASHERS = (
    ["django.contrib.auth.hashers.MD5PasswordHasher"]
    if env_bool("TOOLCRIB_FAST_HASHER")
    else [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
MEDIA_ROOT = Path(env("MEDIA_ROOT", str(DATA_DIR / "media")))
LOGIN_URL = "/admin/login/"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
    "loggers": {
        "google_adk": {"level": env("ADK_LOG_LEVEL", "WARNING")},
        "httpx": {"level": "WARNING"},
    },
}
