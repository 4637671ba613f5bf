"""The embedded default's cache: Django's local-memory cache, each key checked once."""

import pytest
from django.core.cache import caches
from django.core.cache.backends.base import CacheKeyWarning
from django.test import override_settings

from project.patches.cache import LocalMemoryCache

LOCAL = {"default": {"BACKEND": "project.patches.cache.LocalMemoryCache"}}


@pytest.fixture
def local():
    with override_settings(CACHES=LOCAL):
        cache = caches.create_connection("default")
        assert isinstance(cache, LocalMemoryCache)
        yield cache
        cache.clear()


def test_values_are_kept_read_and_forgotten_as_djangos_own(local):
    local.set("a", {"n": 1})
    local.set_many({"b": 2, "c": [3]})
    read = local.get("a")
    read["n"] = 99  # a copy: what was stored is not changed through it

    assert local.get_many(["a", "b", "c", "missing"]) == {
        "a": {"n": 1},
        "b": 2,
        "c": [3],
    }
    assert local.add("b", 5) is False
    assert local.incr("b") == 3
    local.delete("a")
    assert local.get("a", "gone") == "gone"


def test_a_key_memcached_would_refuse_warns_at_every_use_not_only_the_first(local):
    for _ in range(3):
        with pytest.warns(CacheKeyWarning, match="characters"):
            local.set("a key with spaces", 1)
        with pytest.warns(CacheKeyWarning, match="characters"):
            assert local.get("a key with spaces") == 1
    with pytest.warns(CacheKeyWarning, match="250"):
        local.get("k" * 300)
