"""The event inspector's runtime half: one stored event, its ids, and the model step
that produced it (GET /api/sessions/{id}/events/{seq}/inspect/).

The tool calls an event carries are governance's audit rows, which the runtime
never reads: toolsets.inspector adds them, and serves the endpoint.

A model step is read from the RunSpan rows of the event's invocation, linked to the
event exactly by its id: `toolcrib.model.step` (agents.adk.model_steps: what the
model was offered, its tokens) and ADK's own `generate_content` span (the model
call's duration), each of which names the event it produced.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from agents.adk import model_steps
from agents.events.wire import frame_from_row, frame_json
from agents.models import Event, Run, RunSpan, Session
from agents.redaction import redact_secrets
from project.errors import NotFoundError

# ADK's model-call span (telemetry schema v2, `generate_content {model}`) names
# the model response event it produced with this attribute.
ADK_EVENT_ID = "gcp.vertex.agent.event_id"


@dataclass(frozen=True)
class InspectedEvent:
    """An event as the inspector shows it, before governance adds its calls."""

    session: Session
    row: Event
    frame: dict[str, Any]
    run_id: str | None
    call_ids: list[str]
    model_step: dict[str, Any] | None

    def ids(self) -> dict[str, Any]:
        return {
            "event_id": self.row.event_id,
            "invocation_id": self.row.invocation_id,
            "run_id": self.run_id,
            "session_id": self.session.pk,
            "call_ids": self.call_ids,
        }


def inspect_event(*, session: Session, seq: int) -> InspectedEvent:
    """The stored event `seq` of a session its reader may see (agents.sessions'
    access_session), its ids and model step; NotFoundError if there is none."""
    row = Event.objects.select_related("sender").filter(session=session, seq=seq)
    row = row.first()
    if row is None:
        raise NotFoundError(
            _("Session %(session_pk)s has no event %(seq)s.")
            % {"session_pk": session.pk, "seq": seq}
        )
    # The timeline's frame: the value of every secret field (a call's `password`
    # argument) redacted by the one rule, as the wire renders every frame.
    frame = frame_json(frame_from_row(row))
    runs = _runs_of(session, row)
    model_step = None
    if row.is_adk and row.author != "user" and runs:
        model_step = _model_step(row, frame["event"], runs)
    return InspectedEvent(
        session=session,
        row=row,
        frame=frame,
        run_id=str(runs[-1]) if runs else None,
        call_ids=call_ids_of(frame["event"]),
        model_step=model_step,
    )


def call_ids_of(event: Mapping[str, Any]) -> list[str]:
    """The ids of the function calls and responses an event carries, in order."""
    found = [c.get("id") for c in event.get("function_calls") or []]
    found += [r.get("id") for r in event.get("function_responses") or []]
    return list(dict.fromkeys(i for i in found if i))


def _runs_of(session: Session, row: Event) -> list[Any]:
    """The runs that drove the event's invocation (an answer's run resumes it)
    and had started by the time it was stored, the event's own last."""
    if not row.invocation_id:
        return []
    runs = Run.objects.filter(session=session, invocation_id=row.invocation_id)
    runs = runs.exclude(started_at__gt=row.created_at).order_by("created_at")
    return list(runs.values_list("pk", flat=True))


def _model_step(
    row: Event, event: Mapping[str, Any], runs: Sequence[Any]
) -> dict[str, Any] | None:
    """The model step that produced the event, from its runs' spans; None if no
    span names it (tracing off, or an event no model call produced)."""
    spans = RunSpan.objects.filter(run_id__in=runs).filter(
        name=model_steps.MODEL_STEP_SPAN
    ) | RunSpan.objects.filter(run_id__in=runs, kind=RunSpan.Kind.MODEL)
    ours = adks = None
    for span in spans.only("name", "duration_ms", "attributes"):
        attributes = span.attributes or {}
        if attributes.get(model_steps.EVENT_ID) == row.event_id:
            ours = span
        elif attributes.get(ADK_EVENT_ID) == row.event_id:
            adks = span
    if ours is None and adks is None:
        return None
    return _step_out(row, event, ours, adks)


def _step_out(
    row: Event, event: Mapping[str, Any], ours: RunSpan | None, adks: RunSpan | None
) -> dict[str, Any]:
    offered = ours.attributes if ours is not None else {}
    called = adks.attributes if adks is not None else {}
    tokens_in = _first(offered, called, key=model_steps.INPUT_TOKENS)
    tokens_out = _first(offered, called, key=model_steps.OUTPUT_TOKENS)
    timed = adks if adks is not None else ours
    return redact_secrets(
        {
            "model": offered.get(model_steps.MODEL)
            or called.get("gen_ai.request.model", ""),
            "agent": offered.get(model_steps.AGENT) or row.author,
            "instruction": offered.get(model_steps.INSTRUCTION, ""),
            "tools": list(offered.get(model_steps.TOOLS) or []),
            "contents": offered.get(model_steps.CONTENTS),
            "answer": {
                "text": event.get("text"),
                "function_calls": [
                    c.get("name") for c in event.get("function_calls") or []
                ],
            },
            "tokens": {
                "input": tokens_in,
                "output": tokens_out,
                "total": (tokens_in or 0) + (tokens_out or 0)
                if tokens_in is not None or tokens_out is not None
                else None,
            },
            "duration_ms": timed.duration_ms,
        }
    )


def _first(*sources: Mapping[str, Any], key: str) -> int | None:
    for source in sources:
        if source.get(key) is not None:
            return int(source[key])
    return None
