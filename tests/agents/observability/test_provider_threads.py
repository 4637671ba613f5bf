"""agents.observability.provider under a worker's threads: the turns that start
first, at once, all record into the one turn recorder the provider was installed
with; an install that fails is not kept."""

import pytest
from opentelemetry.sdk.trace import TracerProvider

from agents.observability import provider
from agents.observability.recorder import TurnRecorder
from tests.threads import at_once

ROUNDS = 20


@pytest.fixture
def first_use(monkeypatch, settings):
    """The process as before its first turn; the provider a fresh SDK one, so the
    suite's own is left as it is."""
    settings.TOOLCRIB_TRACES = True

    def reset() -> TracerProvider:
        monkeypatch.setattr(provider, "_installed", False)
        monkeypatch.setattr(provider, "_recorder", None)
        fresh = TracerProvider()
        monkeypatch.setattr(provider.trace, "get_tracer_provider", lambda: fresh)
        return fresh

    return reset


def test_turns_starting_at_once_all_record_into_the_one_installed_recorder(
    first_use,
):
    for _ in range(ROUNDS):
        first_use()

        recorders = at_once(lambda i: provider.turn_recorder())

        assert isinstance(recorders[0], TurnRecorder)
        assert all(recorder is recorders[0] for recorder in recorders)
        assert provider.turn_recorder() is recorders[0]


def test_an_install_that_failed_is_tried_again_by_the_next_turn(first_use, monkeypatch):
    fresh = first_use()
    calls = {"n": 0}
    add = fresh.add_span_processor

    def failing_once(processor) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("exporter would not start")
        add(processor)

    monkeypatch.setattr(fresh, "add_span_processor", failing_once)

    with pytest.raises(RuntimeError):
        provider.turn_recorder()

    recorder = provider.turn_recorder()
    assert isinstance(recorder, TurnRecorder)
    with fresh.get_tracer("test").start_as_current_span("turn") as span:
        trace_id = span.get_span_context().trace_id
        recorder.open(trace_id)
    assert [kept.name for kept in recorder.pop(trace_id)] == ["turn"]
