"""project.patches.cache under threads: Django makes a cache object per thread, and every
one of them shares the process's one Redis client, made once however many threads
use the cache first at once; the local-memory cache's key checks are kept safely.
"""

import uuid

import pytest
from django.core.cache import caches
from django.test import override_settings

from project.patches import cache as project_cache
from tests.integration import services
from tests.threads import at_once


@pytest.fixture
def redis_caches(monkeypatch):
    """The Redis cache as production configures it, on a prefix of this run's own;
    no client made yet in this process."""
    prefix = f"toolcrib-threads-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(project_cache, "_clients", {})
    with services.redis_prefix(prefix) as url:
        config = {
            "default": {
                "BACKEND": "project.patches.cache.RedisCache",
                "LOCATION": url,
                "KEY_PREFIX": prefix,
            }
        }
        with override_settings(CACHES=config):
            yield


def test_threads_using_the_redis_cache_first_at_once_share_one_client(redis_caches):
    def use(index: int):
        cache = caches.create_connection("default")  # as each thread gets its own
        cache.set(f"key-{index}", index)
        assert cache.get(f"key-{index}") == index
        return cache._cache.get_client(write=True)

    clients = at_once(use)

    assert all(client is clients[0] for client in clients)
    assert list(project_cache._clients.values()) == [clients[0]]
