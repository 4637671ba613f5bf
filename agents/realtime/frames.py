"""Frames a client sends on a websocket, validated with pydantic before anything acts.

Each frame is a client input of agents.inputs (the model its REST twin validates
with) and a `type`.
"""

import json
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agents.inputs import (
    CallId,
    CancelInput,
    CredentialAnswer,
    DecisionInput,
    FunctionResponseInput,
    MessageInput,
    QueueCancelInput,
    StoredText,
    load_client_json,
    text_problem,
)
from agents.requests.rings import RequestFrame

REF_MAX_CHARS = 64
Ref = Annotated[StoredText, Field(min_length=1, max_length=REF_MAX_CHARS)]
"""A client's name for one frame it sent, echoed on the ack or error that answers it."""


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PingFrame(_Frame):
    """`{"type": "ping"}`: answered with `{"type": "pong"}`."""

    type: Literal["ping"]


class MessageFrame(MessageInput):
    """`{"type": "message", "text": ..., "tool_choice"?: ..., "ref"?: ...}`: starts a
    turn, answered with an ack, or an error; either carries the frame's `ref`, if
    given, so a client knows which message was refused (and gives its text back)."""

    type: Literal["message"]
    ref: Ref | None = None


class FunctionResponseFrame(FunctionResponseInput):
    """`{"type": "function_response", "call_id", "response": {...}}`: a long-running
    call's result; the agent resumes where it paused. Answered with an ack."""

    type: Literal["function_response"]


class DecideFrame(DecisionInput):
    """`{"type": "decide", "approval_id", "approved": bool, "comment"?, "remember"?}`:
    approve or reject a tool call waiting for approval (on a session's socket, of
    that session; on the inbox socket, of any). Answered with an ack."""

    type: Literal["decide"]
    approval_id: int = Field(ge=1)


class CredentialFrame(_Frame):
    """`{"type": "credential", "call_id", "credential": {"api_key": ...}}`: answer a
    tool's credential request of this session (the `adk_request_credential` call
    id). Answered with an ack; the secret is stored encrypted, never echoed."""

    type: Literal["credential"]
    call_id: CallId
    credential: CredentialAnswer


class CancelFrame(CancelInput):
    """`{"type": "cancel", "run"?: "<run id>"}`: stop a turn of this session, the
    named run or, with none, the session's current one (agents.turns.cancel).
    Answered with an ack (the run, now cancelled), or an error (`run_ended`,
    `nothing_running`, `not_found`)."""

    type: Literal["cancel"]


class CancelQueueFrame(QueueCancelInput):
    """`{"type": "cancel_queue", "running"?: bool}`: cancel every queued turn of
    this session, and with `running` the running one too (agents.turns.cancel).
    Answered with an ack naming the runs cancelled (`cancelled`, maybe none)."""

    type: Literal["cancel_queue"]


ClientFrame = Annotated[
    PingFrame
    | MessageFrame
    | FunctionResponseFrame
    | DecideFrame
    | CredentialFrame
    | CancelFrame
    | CancelQueueFrame,
    Field(discriminator="type"),
]
_adapter = TypeAdapter(ClientFrame)


def parse_client_frame(raw: str) -> ClientFrame:
    """Parse one frame.

    Raises:
        agents.inputs.BadJson: Malformed or nested too deep.
        agents.inputs.BadText: A text breaks the rule for stored text.
        pydantic.ValidationError: Not a frame of this protocol.
    """
    return _adapter.validate_python(load_client_json(raw))


def _unread(text: str) -> None:
    return None


def client_frame_schema() -> dict:
    return _adapter.json_schema()


def ref_of(raw: str) -> str | None:
    """The `ref` of a frame that could not be parsed whole, if it has a usable one:
    its refusal then names it too. Never raises."""
    try:
        # Numbers unread: one out of range must not hide the ref of its refusal.
        value = json.loads(
            raw, parse_int=_unread, parse_float=_unread, parse_constant=_unread
        )
    except (ValueError, RecursionError):
        return None
    ref = value.get("ref") if isinstance(value, dict) else None
    valid = isinstance(ref, str) and 0 < len(ref) <= REF_MAX_CHARS
    return ref if valid and text_problem(ref) is None else None


class PongFrame(BaseModel):
    type: Literal["pong"] = "pong"


class AckRun(BaseModel):
    id: str
    status: str


def _absent(value: object) -> bool:
    return value is None


class AckFrame(BaseModel):
    """The answer to a message frame: the Run it started (and the frame's `ref`);
    null for a decision of a gateway call's approval, which resumes no Run, and for
    `cancel_queue`, whose runs cancelled are in `cancelled`."""

    type: Literal["ack"] = "ack"
    run: AckRun | None
    cancelled: list[AckRun] | None = Field(default=None, exclude_if=_absent)
    ref: str | None = Field(default=None, exclude_if=_absent)


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorFrame(BaseModel):
    """A frame the server could not act on; the socket stays open. `ref`: the
    refused frame's, when it gave one the server could read."""

    type: Literal["error"] = "error"
    error: ErrorDetail
    ref: str | None = Field(default=None, exclude_if=_absent)


class LaggedFrame(BaseModel):
    """Live frames were dropped; the server now replays every event after `after`."""

    type: Literal["lagged"] = "lagged"
    after: int


class AccessChangedFrame(BaseModel):
    """What you may use changed; the session is still yours."""

    type: Literal["access_changed"] = "access_changed"


class InboxFrame(BaseModel):
    """The inbox socket's first frame: how many requests wait on your answer."""

    type: Literal["inbox"] = "inbox"
    count: int


def server_frame_schemas() -> dict[str, dict]:
    """JSON schema of every control frame the server sends.

    Events: see agents.events.wire."""
    models = [
        PongFrame,
        AckFrame,
        ErrorFrame,
        LaggedFrame,
        AccessChangedFrame,
        InboxFrame,
        RequestFrame,
    ]
    return {
        model.model_fields["type"].default: model.model_json_schema()
        for model in models
    }
