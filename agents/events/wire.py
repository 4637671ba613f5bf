"""The wire schema: one shape for every event, on the REST API and the websocket.

ADK events are stored as ADK dumps them (snake_case); this module turns a stored row
or a live ADK event into the frame clients see. docs/events.md documents it.
agents.events.log stores and reads the rows this renders.
"""

import json
from collections.abc import Mapping
from typing import Any, Literal

import pydantic_core
from google.adk.events import Event as AdkEvent
from google.adk.sessions.state import State
from pydantic import BaseModel, ConfigDict, Field, RootModel

from agents.adk.auth import redacted_event
from agents.adk.event_kinds import ESCALATED_TO, event_kind, text_of
from agents.inputs import replace_surrogates
from agents.models import Run
from agents.redaction import redact_secrets

Kind = Literal[
    "user_message",
    "text",
    "function_call",
    "function_response",
    "transfer",
    "escalation",
    "state_delta",
    "artifact",
    "auth_request",
    "approval_request",
    "run_started",
    "run_finished",
    "error",
    "tools_changed",
    "session_closed",
    "node_output",
    "event",
]

TOO_DEEP_TO_SHOW = "Not shown: nested deeper than events are rendered."


class FunctionCallOut(BaseModel):
    id: str | None = None
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class FunctionResponseOut(BaseModel):
    id: str | None = None
    name: str
    response: dict[str, Any] = Field(default_factory=dict)
    status: Literal["ok", "error", "pending"] = "ok"


class ScopedState(BaseModel):
    session: dict[str, Any] = Field(default_factory=dict)
    user: dict[str, Any] = Field(default_factory=dict)
    app: dict[str, Any] = Field(default_factory=dict)


class Handoff(BaseModel):
    """A transfer or an escalation: from which agent to which, and why if told."""

    model_config = ConfigDict(populate_by_name=True)

    from_agent: str = Field(alias="from")
    to_agent: str | None = Field(default=None, alias="to")
    # Present only when the agent said why (ADK's transfer_reason).
    reason: str | None = Field(default=None, exclude_if=lambda value: value is None)


class ErrorOut(BaseModel):
    code: str | None = None
    message: str


class RunTokens(BaseModel):
    input: int
    output: int


class RunStats(BaseModel):
    """What an ended run used: its root agent's model, tokens, time, calls."""

    model: str
    tokens: RunTokens
    duration_ms: int | None
    model_calls: int
    tool_calls: int


class RunOut(BaseModel):
    """A Run as run_started, run_finished and error carry it."""

    id: str
    status: str  # queued, running, succeeded, failed, waiting
    error: str | None = None
    waiting_for: Literal["approval", "credential", "result"] | None = None
    resumes: str | None = None  # the id of the run this one resumes
    stats: RunStats | None = None  # once the run has ended
    # How often it was queued again (its first delivery lost before it started):
    # present only when it was.
    requeues: int = Field(default=0, exclude_if=lambda value: not value)


def run_out(run: Run) -> dict[str, Any]:
    """The Run as the events about it carry it."""
    return RunOut(
        id=str(run.id),
        status=run.status,
        error=run.error or None,
        waiting_for=run.waiting_for or None,
        resumes=str(run.resumes_id) if run.resumes_id else None,
        stats=run_stats(run) if run.is_finished else None,
        requeues=run.requeues,
    ).model_dump()


def run_stats(run: Run) -> RunStats:
    """An ended run's stats, from its stored counts."""
    duration = None
    if run.started_at and run.finished_at:
        duration = int((run.finished_at - run.started_at).total_seconds() * 1000)
    return RunStats(
        model=run.model,
        tokens=RunTokens(input=run.prompt_tokens, output=run.completion_tokens),
        duration_ms=duration,
        model_calls=run.model_calls,
        tool_calls=run.tool_calls,
    )


class Sender(BaseModel):
    """Who sent a user message: the signed-in user it came from, by the server's
    word (a client cannot say). Staff in someone else's session show as staff."""

    id: int
    username: str


def sender_of(user) -> Sender | None:
    """The sender a user message records, from the user who sent it."""
    if user is None:
        return None
    return Sender(id=user.pk, username=user.get_username())


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class NodeOut(BaseModel):
    """Where in a workflow (ADK 2.x) an event happened: its node's path in the run
    (`wf@1/review@1`, each name with its run counter), and the node's output when
    the event carries it (`output_for`: the nodes, the node's enclosing workflows
    too, whose output it is)."""

    path: str
    output: Any = None
    output_for: list[str] = Field(default_factory=list)


class WireEvent(BaseModel):
    """One event as clients see it."""

    id: str
    invocation_id: str = ""
    author: str
    kind: Kind
    partial: bool = False
    ts: float
    branch: str | None = None
    text: str | None = None
    function_calls: list[FunctionCallOut] = Field(default_factory=list)
    function_responses: list[FunctionResponseOut] = Field(default_factory=list)
    state_delta: ScopedState | None = None
    artifact_delta: dict[str, int] | None = None
    transfer: Handoff | None = None
    escalation: Handoff | None = None
    long_running_tool_ids: list[str] = Field(default_factory=list)
    error: ErrorOut | None = None
    run: RunOut | None = None
    usage: Usage | None = None
    # The node (ADK 2.x: an agent or a workflow's node) that wrote the event; null
    # for Toolcrib's own.
    node: NodeOut | None = None
    # tools_changed: toolsets switched in this session, name -> active now.
    toolsets: dict[str, bool] | None = None
    actions: dict[str, Any] = Field(default_factory=dict)
    # Who sent a user message (the owner, or staff in her session); null for
    # events not from a person.
    sender: Sender | None = None


class EventFrame(BaseModel):
    """`{"type": "event", "seq", "session", "event"}`: seq is null for partial text."""

    type: Literal["event"] = "event"
    seq: int | None
    session: str
    event: WireEvent


class EventFrameList(RootModel[list[EventFrame]]):
    """A list of event frames, as GET /api/sessions/{id}/events/ returns it."""


def split_state_delta(delta: Mapping[str, Any]) -> ScopedState | None:
    """Split an ADK state delta by prefix, the way ADK's session services do."""
    if not delta:
        return None
    scoped = ScopedState()
    for key, value in delta.items():
        if key.startswith(State.APP_PREFIX):
            scoped.app[key.removeprefix(State.APP_PREFIX)] = value
        elif key.startswith(State.USER_PREFIX):
            scoped.user[key.removeprefix(State.USER_PREFIX)] = value
        elif not key.startswith(State.TEMP_PREFIX):
            scoped.session[key] = value
    return scoped


def is_error_response(response: Mapping[str, Any]) -> bool:
    """Whether a tool's answer says the call failed: an `error` key, `"status":
    "error"`, or an MCP tool result marked `"isError": true`."""
    return (
        "error" in response
        or response.get("status") == "error"
        or response.get("isError") is True
    )


def _response_status(response: Mapping[str, Any], pending: bool) -> str:
    # A long-running tool's first answer is an interim one ("pending" in ADK's docs).
    if pending or response.get("status") == "pending":
        return "pending"
    if is_error_response(response):
        return "error"
    return "ok"


def wire_from_adk(
    event: AdkEvent, *, kind: str | None = None, sender: Sender | None = None
) -> WireEvent:
    """Render an ADK event (stored or live) in the wire shape, without secrets.

    The stored event keeps a call's arguments as the model wrote them (ADK sends
    them to the model again, and runs an approved call with them); every frame
    shows them, its results and actions through the one redaction rule.
    """
    event = redacted_event(event)
    actions = event.actions
    long_running = sorted(event.long_running_tool_ids or [])
    calls = [
        FunctionCallOut(
            id=c.id, name=c.name or "", args=redact_secrets(dict(c.args or {}))
        )
        for c in event.get_function_calls()
    ]
    responses = [
        FunctionResponseOut(
            id=r.id,
            name=r.name or "",
            response=redact_secrets(dict(r.response or {})),
            status=_response_status(r.response or {}, r.id in long_running),
        )
        for r in event.get_function_responses()
    ]
    usage = None
    if event.usage_metadata:
        meta = event.usage_metadata
        usage = Usage(
            prompt_tokens=meta.prompt_token_count or 0,
            completion_tokens=meta.candidates_token_count or 0,
            total_tokens=meta.total_token_count or 0,
        )
    error = None
    if event.error_code or event.error_message:
        error = ErrorOut(code=event.error_code, message=event.error_message or "")
    return WireEvent(
        id=event.id,
        invocation_id=event.invocation_id or "",
        author=event.author,
        kind=kind or event_kind(event),
        partial=bool(event.partial),
        ts=event.timestamp,
        branch=event.branch,
        text=text_of(event),
        function_calls=calls,
        function_responses=responses,
        state_delta=split_state_delta(actions.state_delta),
        artifact_delta=dict(actions.artifact_delta) or None,
        transfer=transfer_of(event),
        escalation=escalation_of(event),
        long_running_tool_ids=long_running,
        error=error,
        usage=usage,
        node=node_of(event),
        actions=_nonempty(
            redact_secrets(actions.model_dump(mode="json", exclude_none=True))
        ),
        sender=sender,
    )


def node_of(event: AdkEvent) -> NodeOut | None:
    """The node that wrote an event (ADK 2.x runs agents as nodes too), with a
    workflow node's output (redacted); None for an event with no node path."""
    info = event.node_info
    if info is None or not info.path:
        return None
    return NodeOut(
        path=info.path,
        output=redact_secrets(event.output),
        output_for=list(info.output_for or []),
    )


def transfer_of(event: AdkEvent) -> Handoff | None:
    """The transfer an event makes: to `transfer_to_agent`, for `transfer_reason`;
    none when it escalates (the transfer is how the escalation reaches the parent)."""
    actions = event.actions
    if not actions.transfer_to_agent or actions.escalate:
        return None
    return Handoff(
        from_agent=event.author,
        to_agent=actions.transfer_to_agent,
        reason=actions.transfer_reason,
    )


def escalation_of(event: AdkEvent) -> Handoff | None:
    """The escalation an event makes: to the escalating agent's parent."""
    if not event.actions.escalate:
        return None
    return Handoff(
        from_agent=event.author,
        to_agent=(event.custom_metadata or {}).get(ESCALATED_TO),
        reason=event.actions.transfer_reason,
    )


def _nonempty(values: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value not in ({}, [], None)}


def wire_from_row(row) -> WireEvent:
    """Render a stored Event row (an ADK event or one of Toolcrib's run records).

    Its sender is read with it (agents.events.log selects it), never one by one.
    """
    sender = sender_of(row.sender) if row.sender_id else None
    if row.is_adk:
        return wire_from_adk(
            AdkEvent.model_validate(row.data), kind=row.kind, sender=sender
        )
    return WireEvent.model_validate(
        {
            **row.data,
            "id": row.event_id,
            "invocation_id": row.invocation_id,
            "author": row.author,
            "kind": row.kind,
            "ts": row.timestamp,
            "sender": sender,
        }
    )


def frame_from_row(row) -> EventFrame:
    return EventFrame(seq=row.seq, session=row.session_id, event=wire_from_row(row))


def frame_json(frame: EventFrame) -> dict[str, Any]:
    """The JSON a client receives, with the `from`/`to` aliases.

    Every event reaches a client through here, stored or live, on REST or a socket,
    so one row stored before agents.inputs existed cannot fail every later read of
    its session: a lone surrogate shows as U+FFFD, and a payload nested deeper than
    pydantic serializes (about 255 levels) is left out, the event keeping its seq.
    """
    try:
        data = frame.model_dump(mode="json", by_alias=True)
    except ValueError:  # pydantic's "Maximum serialization depth exceeded"
        data = _without_payload(frame).model_dump(mode="json", by_alias=True)
    try:
        # UTF-8 in Rust, a few microseconds: the walk below only for a frame that
        # needs it (it is most of the cost of a frame otherwise).
        pydantic_core.to_json(data)
    except pydantic_core.PydanticSerializationError:
        return replace_surrogates(data)
    return data


def frame_text(frame: EventFrame) -> str:
    """frame_json()'s JSON as text, for the doorbell (agents.doorbell.streams):
    encoded once, in Rust, straight from the frame, where a dict and then its text
    took two passes in Python. A frame that needs frame_json()'s repairs (a lone
    surrogate, a payload nested too deep) raises here and is encoded from them."""
    try:
        return frame.model_dump_json(by_alias=True)
    except ValueError:  # pydantic's serialization errors are ValueErrors
        return json.dumps(frame_json(frame))


def _without_payload(frame: EventFrame) -> EventFrame:
    """The frame with its free-form JSON (arguments, results, state) left out."""
    event = frame.event
    shown = event.model_copy(
        update={
            "function_calls": [
                FunctionCallOut(id=call.id, name=call.name)
                for call in event.function_calls
            ],
            "function_responses": [
                FunctionResponseOut(
                    id=result.id,
                    name=result.name,
                    status=result.status,
                    response={"error": TOO_DEEP_TO_SHOW},
                )
                for result in event.function_responses
            ],
            "state_delta": None,
            "actions": {},
        }
    )
    return frame.model_copy(update={"event": shown})


def frame_schema() -> dict[str, Any]:
    """JSON schema of the event frame, generated from the pydantic models."""
    return EventFrame.model_json_schema(by_alias=True)
