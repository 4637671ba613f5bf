"""Real time and work off the request: Redis (channel layer, cache), Celery,
the inline executor, leases and sweeps, and the websocket's size limits.
"""

from django.core.exceptions import ImproperlyConfigured
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from project.settings.base import env
from project.settings.patches_off import patch_on

# Redis: channel layer and cache when set; in-memory otherwise. Every key starts
# with TOOLCRIB_REDIS_PREFIX, so deployments (or test runs) can share one Redis.
REDIS_URL = env("REDIS_URL")
TOOLCRIB_REDIS_PREFIX = env("TOOLCRIB_REDIS_PREFIX", "toolcrib")
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
if REDIS_URL and not REDIS_URL.startswith(_REDIS_SCHEMES):
    raise ImproperlyConfigured(
        "REDIS_URL must start with redis://, rediss:// or unix://."
    )
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # Redis Pub/Sub: a doorbell pushed to who listens, sockets closed when
            # Redis restarts (project/patches/redis_layer.py).
            # Off: channels_redis's own.
            "BACKEND": (
                "project.patches.redis_layer.RedisChannelLayer"
                if patch_on("redis_layer")
                else "channels_redis.core.RedisChannelLayer"
            ),
            "CONFIG": {
                # Commands time out after 30 s; the subscriber connection reads
                # without a timeout, and a dead Redis still ends its receives.
                "hosts": [
                    {
                        "address": REDIS_URL,
                        "socket_timeout": 30,
                        "socket_connect_timeout": 5,
                        "socket_keepalive": True,
                    }
                ],
                # Pub/Sub names are global to a Redis server: one prefix each.
                "prefix": f"{TOOLCRIB_REDIS_PREFIX}:asgi",
                # Messages a channel holds for its socket before it misses one.
                "capacity": 1000,
            },
        }
    }
    CACHES = {
        "default": {
            # Django's, one pool and client per process (project/patches/cache.py).
            "BACKEND": (
                "project.patches.cache.RedisCache"
                if patch_on("cache")
                else "django.core.cache.backends.redis.RedisCache"
            ),
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": TOOLCRIB_REDIS_PREFIX,
            # After a Redis restart every pooled connection is dead: a command
            # retries on a new one (for about two seconds) instead of failing.
            "OPTIONS": {
                "retry": Retry(ExponentialBackoff(cap=0.5, base=0.05), 5),
                "retry_on_error": [RedisConnectionError, RedisTimeoutError],
                "socket_connect_timeout": 5,
                "socket_timeout": 5,
            },
        }
    }
else:
    # channels' own, its group send in one pass (project/patches/memory_layer.py).
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": (
                "project.patches.memory_layer.InMemoryChannelLayer"
                if patch_on("memory_layer")
                else "channels.layers.InMemoryChannelLayer"
            )
        }
    }
    # Django's own local-memory cache.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Celery: turns run in workers when a broker is set, inline in the server otherwise.
CELERY_BROKER_URL = env("CELERY_BROKER_URL")
_BROKER_SCHEMES = ("redis://", "rediss://", "amqp://", "amqps://", "pyamqp://")
if CELERY_BROKER_URL and not CELERY_BROKER_URL.startswith(_BROKER_SCHEMES):
    raise ImproperlyConfigured(
        "CELERY_BROKER_URL must be a Redis (redis://, rediss://) or RabbitMQ "
        "(amqp://, amqps://) URL."
    )
if CELERY_BROKER_URL and not REDIS_URL:
    raise ImproperlyConfigured(
        "CELERY_BROKER_URL is set but REDIS_URL is not: events from workers could "
        "never reach the web processes. Set REDIS_URL too."
    )
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
# A task is acknowledged when it ends: a worker that dies mid-turn leaves its
# message to the broker, which delivers it again (agents/turns/queue.py makes that
# harmless: the Run ends failed once its lease runs out, and never runs twice).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = env("TOOLCRIB_CELERY_QUEUE", "toolcrib")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {"global_keyprefix": f"{TOOLCRIB_REDIS_PREFIX}:celery:"}
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://"))
    else {}
)
if CELERY_BROKER_URL.startswith("redis://"):
    # kombu's Redis transport, one client per channel instead of one per publish
    # and per ack (project/celery.py). rediss:// keeps kombu's own, scheme and all.
    CELERY_BROKER_TRANSPORT = "project.celery:RedisTransport"
TOOLCRIB_EXECUTOR = "celery" if CELERY_BROKER_URL else "inline"
# Seconds a running turn's lease lasts in Redis (renewed three times as often):
# a turn whose lease runs out lost its process, and ends failed. Needs REDIS_URL.
TOOLCRIB_RUN_LEASE = float(env("TOOLCRIB_RUN_LEASE", "20")) if REDIS_URL else 0.0
# Seconds between two sweeps of the runs a dead process left (agents/turns/sweep.py),
# on a thread of each worker (and of a server running turns inline); 0: none.
TOOLCRIB_SWEEP_SECONDS = float(
    env("TOOLCRIB_SWEEP_SECONDS", str(TOOLCRIB_RUN_LEASE or 30))
)
# A queued run no process holds is queued again after this many seconds (and as
# many more after each time); once unheld for twice the turn timeout it fails.
TOOLCRIB_REQUEUE_SECONDS = float(
    env("TOOLCRIB_REQUEUE_SECONDS", str(3 * TOOLCRIB_RUN_LEASE or 60))
)


# A websocket frame past TOOLCRIB_WS_MAX_FRAME_BYTES gets a `too_big` error frame
# and the socket stays; one past TOOLCRIB_WS_MAX_MESSAGE_BYTES is not read at all:
# Daphne closes the socket with 1009 and a reason (project/patches/daphne_input.py).
TOOLCRIB_WS_MAX_FRAME_BYTES = int(env("TOOLCRIB_WS_MAX_FRAME_BYTES", "65536"))
TOOLCRIB_WS_MAX_MESSAGE_BYTES = int(env("TOOLCRIB_WS_MAX_MESSAGE_BYTES", "1048576"))
if TOOLCRIB_WS_MAX_MESSAGE_BYTES < TOOLCRIB_WS_MAX_FRAME_BYTES:
    raise ImproperlyConfigured(
        "TOOLCRIB_WS_MAX_MESSAGE_BYTES must be at least TOOLCRIB_WS_MAX_FRAME_BYTES."
    )
