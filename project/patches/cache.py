"""The caches: Django's Redis cache with one connection pool and one redis-py client
per process, and the embedded default's local-memory cache with each key checked once.

Django's own keeps a pool per cache object, and there is a cache object per thread
and per async context: a turn (a thread of its own, see agents.turns.drive) opened
a Redis connection of its own, and every cache call built a redis-py client (a few
hundred response callbacks) anew. A redis-py client is safe to share: each command
takes a connection from the pool.

Written for Django 5.2 (its RedisCacheClient's `_get_connection_pool_index`,
`_pool_options`, `_servers`, `_client` and `_pool_class`; LocMemCache's
`validate_key`) and redis-py 8.2. Off (`TOOLCRIB_PATCHES_OFF=cache`): settings
name Django's own RedisCache and LocMemCache.
"""

import threading
import warnings
from functools import lru_cache

from django.core.cache.backends.base import CacheKeyWarning, memcache_key_warnings
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient as DjangoClient

WRITTEN_FOR = {"django": "5.2", "redis": "8.2"}

_clients: dict[tuple[str, str], object] = {}
_lock = threading.Lock()


class RedisCacheClient(DjangoClient):
    """Django's client, its pool and redis-py client shared by the process."""

    def _shared(self, write: bool):
        index = self._get_connection_pool_index(write)
        key = (self._servers[index], repr(sorted(self._pool_options.items())))
        client = _clients.get(key)
        if client is None:
            with _lock:
                client = _clients.get(key)
                if client is None:
                    pool = self._pool_class.from_url(
                        self._servers[index], **self._pool_options
                    )
                    client = _clients[key] = self._client(connection_pool=pool)
        return client

    def _get_connection_pool(self, write):
        return self._shared(write).connection_pool

    def get_client(self, key=None, *, write=False):
        return self._shared(write)


class RedisCache(DjangoRedisCache):
    """django.core.cache.backends.redis.RedisCache with RedisCacheClient."""

    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = RedisCacheClient


class LocalMemoryCache(LocMemCache):
    """Django's LocMemCache, each key's text checked for memcached's limits once.

    Django checks every key on every call, a character at a time (3 of a read's
    4 microseconds); the embedded default reads the same few keys every model step
    (the access versions, a turn's stop). A key's warnings are its text's alone, so
    its first check answers for the rest (the most recent KEYS_CHECKED keys'; a
    key whose check is let go is checked again).
    """

    def validate_key(self, key) -> None:
        for warning in _key_warnings(key):
            warnings.warn(warning, CacheKeyWarning)  # noqa: B028 - as Django warns


KEYS_CHECKED = 4096


@lru_cache(maxsize=KEYS_CHECKED)
def _key_warnings(key: str) -> tuple[str, ...]:
    return tuple(memcache_key_warnings(key))
