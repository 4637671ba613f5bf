"""What starts a turn (a message to the agent) and what stops one."""

from uuid import UUID

from django.conf import settings
from pydantic import field_validator
from pydantic.json_schema import SkipJsonSchema

from agents.inputs.agent_settings import ToolChoice
from agents.inputs.rule import ClientInput, StoredText


class MessageInput(ClientInput):
    """A message to the agent: it starts a turn.

    `tool_choice`, if given, decides how the turn's first model call may use tools,
    over the agent's own choice (docs/availability.md#tool-choice-the-first-call).
    """

    text: StoredText
    tool_choice: ToolChoice = None

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("text must not be blank")
        limit = settings.TOOLCRIB_MAX_MESSAGE_CHARS
        if len(value) > limit:
            raise ValueError(f"text is longer than {limit} characters")
        return value


class CancelInput(ClientInput):
    """Stop a turn: its Run ends cancelled (agents.turns.cancel).

    `run`: the run to stop. Over REST the URL names it (a `run` here must be the
    same); on a session's socket, left out, the session's current run: its
    running one, else its oldest queued one.
    """

    run: UUID | SkipJsonSchema[None] = None


class QueueCancelInput(ClientInput):
    """Cancel a session's queue: every queued turn, and with `running` the running
    one too (agents.turns.cancel.cancel_queue).

    `running`: also stop the turn that runs now (Stop all); left out, it goes on.
    """

    running: bool = False
