"""Frames a client sends on a websocket, validated with pydantic before anything acts."""

import json
from typing import Annotated, Any, Literal

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PingFrame(_Frame):
    """`{"type": "ping"}`: answered with `{"type": "pong"}`."""

    type: Literal["ping"]


class MessageFrame(_Frame):
    """`{"type": "message", "text": ...}`: starts a turn, answered with an ack."""

    type: Literal["message"]
    text: str

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("text must not be blank")
        if len(value) > settings.TOOLCRIB_MAX_MESSAGE_CHARS:
            raise ValueError(
                f"text is longer than {settings.TOOLCRIB_MAX_MESSAGE_CHARS} characters"
            )
        return value


class FunctionResponseFrame(_Frame):
    """`{"type": "function_response", "call_id", "response": {...}}`: a long-running
    call's result; the agent resumes where it paused. Answered with an ack."""

    type: Literal["function_response"]
    call_id: str = Field(min_length=1, max_length=128)
    response: dict[str, Any]

    @field_validator("response")
    @classmethod
    def _not_too_big(cls, value: dict[str, Any]) -> dict[str, Any]:
        limit = settings.TOOLCRIB_MAX_MESSAGE_CHARS
        if len(json.dumps(value)) > limit:
            raise ValueError(f"response is longer than {limit} characters of JSON")
        return value


class DecideFrame(_Frame):
    """`{"type": "decide", "approval_id", "approved": bool}`: approve or reject a
    tool call of this session waiting for approval. Answered with an ack."""

    type: Literal["decide"]
    approval_id: int = Field(ge=1)
    approved: bool = Field(strict=True)


Secret = Annotated[str, Field(min_length=1, max_length=4096)]


class CredentialAnswer(_Frame):
    """The secret, in the fields the request's scheme needs (docs/tools.md)."""

    # A rejected secret must not come back in an error message.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    api_key: Secret | None = None
    token: Secret | None = None
    username: Secret | None = None
    password: Secret | None = None
    access_token: Secret | None = None
    refresh_token: Secret | None = None


class CredentialFrame(_Frame):
    """`{"type": "credential", "call_id", "credential": {"api_key": ...}}`: answer a
    tool's credential request of this session (the `adk_request_credential` call
    id). Answered with an ack; the secret is stored encrypted, never echoed."""

    type: Literal["credential"]
    call_id: str = Field(min_length=1, max_length=128)
    credential: CredentialAnswer


ClientFrame = Annotated[
    PingFrame | MessageFrame | FunctionResponseFrame | DecideFrame | CredentialFrame,
    Field(discriminator="type"),
]
_adapter = TypeAdapter(ClientFrame)


def parse_client_frame(raw: str) -> ClientFrame:
    """Parse one frame; raises json.JSONDecodeError or pydantic.ValidationError."""
    data = json.loads(raw)
    return _adapter.validate_python(data)


def client_frame_schema() -> dict:
    return _adapter.json_schema()


class PongFrame(BaseModel):
    type: Literal["pong"] = "pong"


class AckRun(BaseModel):
    id: str
    status: str


class AckFrame(BaseModel):
    """The answer to a message frame: the Run it started."""

    type: Literal["ack"] = "ack"
    run: AckRun


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorFrame(BaseModel):
    """A frame the server could not act on; the socket stays open."""

    type: Literal["error"] = "error"
    error: ErrorDetail


class LaggedFrame(BaseModel):
    """Live frames were dropped; the server now replays every event after `after`."""

    type: Literal["lagged"] = "lagged"
    after: int


class AccessChangedFrame(BaseModel):
    """What you may use changed; the session is still yours."""

    type: Literal["access_changed"] = "access_changed"


def server_frame_schemas() -> dict[str, dict]:
    """JSON schema of every control frame the server sends (events: see agents.events)."""
    models = [PongFrame, AckFrame, ErrorFrame, LaggedFrame, AccessChangedFrame]
    return {
        model.model_fields["type"].default: model.model_json_schema()
        for model in models
    }
