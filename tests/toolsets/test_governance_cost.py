"""What governance costs a turn, pinned: one cache round trip per model step (the
session's activation token, read in the hop that reads access's versions from the
database: toolsets.access.asnapshot), none per call.

The weather agent's turn has two model steps and one call. Cache operations are
counted at the cache backend, on every thread, and only the outermost call of
each (locmem's get_many calls its get for each key); only governance's keys
(`toolsets:`) count. The turn's SQL is pinned in tests/agents/test_turn_queries.py.
"""

import threading

import pytest
from django.core.cache import caches

from agents.models import Session
from toolsets import activation, bindings

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "weather_sentiment"
QUESTION = "weather in london?"  # two model steps, one get_weather_report call
METHODS = ("get", "get_many", "set", "set_many", "add", "incr", "delete", "has_key")


@pytest.fixture
def cache_ops(monkeypatch) -> list[tuple[str, list[str]]]:
    """Each outermost cache call on a `toolsets:` key from now on: (method, keys)."""
    seen: list[tuple[str, list[str]]] = []
    depth = threading.local()
    backend = type(caches["default"])

    def counted(name, plain):
        def call(self, key, *args, **kwargs):
            outermost = not getattr(depth, "n", 0)
            depth.n = getattr(depth, "n", 0) + 1
            try:
                return plain(self, key, *args, **kwargs)
            finally:
                depth.n -= 1
                keys = [key] if isinstance(key, str) else list(key)
                if outermost and any(k.startswith("toolsets:") for k in keys):
                    seen.append((name, keys))

        return call

    for name in METHODS:
        monkeypatch.setattr(backend, name, counted(name, getattr(backend, name)))
    return seen


@pytest.fixture
def weather_session(catalog, alice, start_session) -> str:
    return start_session(alice, AGENT)


def test_a_warm_turn_reads_the_cache_once_per_model_step_and_never_per_call(
    alice, say, weather_session, cache_ops
):
    say(alice, weather_session, QUESTION)  # decisions and activation read once
    cache_ops.clear()

    run = say(alice, weather_session, QUESTION)

    assert run["status"] == "succeeded"
    step = [activation_key(weather_session)]
    assert cache_ops == [("get_many", step), ("get_many", step)]


def activation_key(session_id: str) -> str:
    return activation.version_key(Session.objects.get(pk=session_id))


def test_a_warm_turn_imports_no_code_agent_to_map_its_tools(
    alice, say, weather_session, monkeypatch
):
    # Each model step maps the agent's plain tools to their toolset, whose
    # description is the code agent's root's: read once a process, where it was
    # loaded again (its tools adopted, its names checked) for every tool, every step.
    say(alice, weather_session, QUESTION)
    loads = []
    plain = bindings.load_code_agent
    monkeypatch.setattr(
        bindings, "load_code_agent", lambda path: loads.append(path) or plain(path)
    )

    run = say(alice, weather_session, QUESTION)

    assert run["status"] == "succeeded"
    assert loads == []
