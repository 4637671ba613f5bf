"""The turn recorder under a worker's threads: spans of turns ending at once, on
many threads, are each kept with their own turn's trace, up to the bound."""

from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider

from agents.observability.recorder import TurnRecorder
from tests.threads import at_once

SPANS = 50  # each turn's


def test_turns_on_many_threads_each_pop_their_own_spans():
    recorder = TurnRecorder(max_spans=SPANS - 10)
    provider = TracerProvider()
    provider.add_span_processor(recorder)
    tracer = provider.get_tracer("threads")

    def turn(index: int) -> tuple[int, list]:
        with tracer.start_as_current_span(f"turn {index}", context=Context()) as root:
            trace_id = root.get_span_context().trace_id
            recorder.open(trace_id)
            for n in range(SPANS):
                with tracer.start_as_current_span(f"turn {index} step {n}"):
                    pass
        return trace_id, recorder.pop(trace_id)

    popped = at_once(turn)

    for index, (trace_id, spans) in enumerate(popped):
        assert len(spans) == SPANS - 10
        assert {span.context.trace_id for span in spans} == {trace_id}
        assert spans[0].name == f"turn {index} step 0"
    assert len(recorder) == 0
