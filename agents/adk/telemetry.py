"""What ADK's own telemetry records of a turn, when nobody asked for more.

ADK instruments every model call whether or not a tracer records it. By default
(its GenAI semconv, schema v2) it turns the whole model request, every content of
the history, into span attributes before it looks at whether the span records:
a cost every model step pays, that grows with the session. Unless an operator
sets OpenTelemetry's own knobs for it (OTEL_SEMCONV_STABILITY_OPT_IN,
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT), a turn asks ADK for the
stable semconv without message content, which records the same spans and
metrics from the request's shape alone.
"""

import os
from functools import cached_property
from typing import get_args

from google.adk.telemetry.context import (
    ContentCapturingMode,
    TelemetryConfig,
    _ExperimentalFeature,
)

OPERATOR_KNOBS = (
    "OTEL_SEMCONV_STABILITY_OPT_IN",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
)


def turn_telemetry() -> TelemetryConfig | None:
    """RunConfig.telemetry for a turn: None (ADK reads the environment) when an
    operator set OpenTelemetry's knobs, else spans without message content."""
    if any(os.environ.get(name) for name in OPERATOR_KNOBS):
        return None
    return LEAN


class ResolvedTelemetry(TelemetryConfig):
    """ADK's TelemetryConfig, each of its answers worked out once.

    ADK asks a turn's config the same questions for every content of every model
    request (whether content goes on log records, which semconv), and each answer
    reads private attributes through pydantic's `__getattr__`. The config is
    frozen and reads the environment once, at construction, so each answer is
    the same every time: this keeps the first, worked out at construction (so
    the config's hash, taken over its attributes, never changes).
    """

    def model_post_init(self, context, /) -> None:
        super().model_post_init(context)
        for name in ANSWERS:
            getattr(self, name)
        self.enabled_features  # noqa: B018 - worked out now, as the answers

    @cached_property
    def enabled_features(self) -> frozenset[str]:
        """The experimental features ADK's own answer enables."""
        ask = TelemetryConfig._experimental_feature_enabled
        return frozenset(name for name in FEATURES if ask(self, name))

    def _experimental_feature_enabled(self, feature) -> bool:
        if feature in FEATURES:
            return feature in self.enabled_features
        return super()._experimental_feature_enabled(feature)


FEATURES = frozenset(get_args(_ExperimentalFeature))
ANSWERS = [
    name
    for name, answer in vars(TelemetryConfig).items()
    if isinstance(answer, property)
]
for _name in ANSWERS:
    _kept = cached_property(vars(TelemetryConfig)[_name].fget)
    _kept.__set_name__(ResolvedTelemetry, _name)
    setattr(ResolvedTelemetry, _name, _kept)


LEAN = ResolvedTelemetry(
    genai_semconv_stability_opt_in="stable",
    capture_message_content=ContentCapturingMode.NO_CONTENT,
)
