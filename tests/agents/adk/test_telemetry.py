"""ADK's telemetry in a turn: no model request turned into span attributes unless an
operator asks for it through OpenTelemetry's own knobs."""

import pytest
from google.adk.telemetry.context import ContentCapturingMode

from agents.adk.telemetry import OPERATOR_KNOBS, turn_telemetry


def test_a_turn_asks_adk_for_spans_without_message_content(monkeypatch):
    for name in OPERATOR_KNOBS:
        monkeypatch.delenv(name, raising=False)

    config = turn_telemetry()

    assert config is not None
    assert not config.should_use_experimental_genai_semconv
    assert config.resolved_content_capturing_mode == ContentCapturingMode.NO_CONTENT
    assert not config.should_add_content_to_logs


@pytest.mark.parametrize("name", OPERATOR_KNOBS)
def test_an_operators_opentelemetry_knob_leaves_the_choice_to_adk(monkeypatch, name):
    monkeypatch.setenv(name, "gen_ai_latest_experimental")

    assert turn_telemetry() is None
