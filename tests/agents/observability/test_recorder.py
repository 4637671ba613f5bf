"""The turn recorder keeps the spans of open traces only, bounded, until popped."""

from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import set_span_in_context

from agents.observability.recorder import TurnRecorder


def tracer_with(recorder: TurnRecorder):
    provider = TracerProvider()
    provider.add_span_processor(recorder)
    return provider.get_tracer("test")


def test_a_turns_spans_are_kept_until_the_turn_pops_them():
    recorder = TurnRecorder(max_spans=100)
    tracer = tracer_with(recorder)
    with tracer.start_as_current_span("turn", context=Context()) as turn:
        trace_id = turn.get_span_context().trace_id
        recorder.open(trace_id)
        with tracer.start_as_current_span("child"):
            pass

    spans = recorder.pop(trace_id)

    assert [span.name for span in spans] == ["child", "turn"]
    assert spans[0].parent.span_id == spans[1].context.span_id
    assert len(recorder) == 0
    assert recorder.pop(trace_id) == []


def test_spans_of_a_trace_nobody_opened_are_dropped():
    recorder = TurnRecorder(max_spans=100)
    tracer = tracer_with(recorder)

    with tracer.start_as_current_span("elsewhere", context=Context()) as span:
        trace_id = span.get_span_context().trace_id

    assert recorder.pop(trace_id) == []
    assert len(recorder) == 0


def test_a_span_ending_after_its_turn_popped_the_trace_is_dropped():
    recorder = TurnRecorder(max_spans=100)
    tracer = tracer_with(recorder)
    turn = tracer.start_span("turn", context=Context())
    trace_id = turn.get_span_context().trace_id
    recorder.open(trace_id)
    straggler = tracer.start_span("straggler", context=set_span_in_context(turn))
    turn.end()

    popped = recorder.pop(trace_id)
    straggler.end()

    assert [span.name for span in popped] == ["turn"]
    assert len(recorder) == 0


def test_a_turn_keeps_at_most_max_spans():
    recorder = TurnRecorder(max_spans=3)
    tracer = tracer_with(recorder)
    with tracer.start_as_current_span("turn", context=Context()) as turn:
        trace_id = turn.get_span_context().trace_id
        recorder.open(trace_id)
        for index in range(10):
            with tracer.start_as_current_span(f"step {index}"):
                pass

    assert [span.name for span in recorder.pop(trace_id)] == [
        "step 0",
        "step 1",
        "step 2",
    ]
