"""Django's Redis cache with one connection pool and one redis-py client per process.

Django's own keeps a pool per cache object, and there is a cache object per thread
and per async context: a turn (a thread of its own, see agents.turns.drive) opened
a Redis connection of its own, and every cache call built a redis-py client (a few
hundred response callbacks) anew. A redis-py client is safe to share: each command
takes a connection from the pool.

Written for Django 5.2 (its RedisCacheClient's `_get_connection_pool_index`,
`_pool_options`, `_servers`, `_client` and `_pool_class`) and redis-py 8.2. Off
(`TOOLCRIB_PATCHES_OFF=cache`): settings name Django's own RedisCache.

The embedded default's cache is Django's own LocMemCache: a subclass that checked
each key's text once saved about 1 µs a read, some 0.1% of a turn, under issue 44's
3% rule (bench/README.md, "The framework patches and what each buys").
"""

import threading

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
