"""ADK's telemetry config under a worker's threads: every turn shares one config
(LEAN), whose answers were worked out as it was made; turns reading them at once,
and configs made at once, give ADK's own answers."""

from google.adk.telemetry.context import ContentCapturingMode, TelemetryConfig

from agents.adk.telemetry import ANSWERS, LEAN, ResolvedTelemetry
from tests.threads import at_once


def answers(config: TelemetryConfig) -> dict:
    return {name: getattr(config, name) for name in ANSWERS}


def test_turns_reading_the_shared_configs_answers_at_once_read_adks_own():
    adks_own = answers(
        TelemetryConfig(
            genai_semconv_stability_opt_in="stable",
            capture_message_content=ContentCapturingMode.NO_CONTENT,
        )
    )

    def read(index: int) -> list[dict]:
        return [answers(LEAN) for _ in range(50)]

    assert at_once(read) == [[adks_own] * 50] * 8


def test_configs_made_at_once_each_answer_as_adks_own():
    def make(index: int) -> tuple[dict, dict]:
        mode = list(ContentCapturingMode)[index % len(ContentCapturingMode)]
        fields = {"capture_message_content": mode}
        return answers(ResolvedTelemetry(**fields)), answers(TelemetryConfig(**fields))

    for resolved, adks in at_once(make):
        assert resolved == adks
