"""ADK's telemetry in a turn: no model request turned into span attributes unless an
operator asks for it through OpenTelemetry's own knobs."""

import pytest
from google.adk.telemetry.context import ContentCapturingMode, TelemetryConfig

from agents.adk.telemetry import (
    ANSWERS,
    FEATURES,
    OPERATOR_KNOBS,
    ResolvedTelemetry,
    turn_telemetry,
)


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


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"genai_semconv_stability_opt_in": "stable"},
        {
            "genai_semconv_stability_opt_in": "experimental",
            "capture_message_content": ContentCapturingMode.SPAN_AND_EVENT,
            "adk_experimental_telemetry_opt_in": True,
        },
        {"capture_message_content": ContentCapturingMode.EVENT_ONLY},
        {"experimental_features_opt_in": frozenset({"mcp", "token_usage"})},
    ],
)
@pytest.mark.parametrize("locked", [False, True])
def test_a_resolved_config_answers_as_adks_own(monkeypatch, fields, locked):
    """The config a turn hands ADK keeps each answer, and each is ADK's own, with
    or without the operator's lock on per-request settings."""
    monkeypatch.setenv(
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY"
    )
    if locked:
        monkeypatch.setenv("ADK_TELEMETRY_IGNORE_RUN_CONFIG", "true")
    else:
        monkeypatch.delenv("ADK_TELEMETRY_IGNORE_RUN_CONFIG", raising=False)

    resolved, adks = ResolvedTelemetry(**fields), TelemetryConfig(**fields)

    assert len(ANSWERS) >= 8
    assert {name: getattr(resolved, name) for name in ANSWERS} == {
        name: getattr(adks, name) for name in ANSWERS
    }
    assert {"mcp", "workflow"} <= FEATURES
    assert {f: resolved._experimental_feature_enabled(f) for f in FEATURES} == {
        f: adks._experimental_feature_enabled(f) for f in FEATURES
    }
    assert hash(resolved) == hash(resolved.model_copy())
