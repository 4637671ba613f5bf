"""An agent's settings as stored (AgentSpec's tool choice, starters, history and
retention), checked alike wherever they come from; and the tool choice a message
may give.
"""

import re
from typing import Annotated, Any

from pydantic import PlainValidator, WithJsonSchema

from agents.inputs.rule import text_problem
from agents.models import RETENTION_MAX_DAYS

TOOL_MODES = ("auto", "none", "required")
TOOL_CHOICE_FORMS = (
    '"auto", "none", "required" or {"mode": "required", "required_function_name": '
    '"<a tool>"}'
)
_FUNCTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,127}")
_TOOL_CHOICE_SCHEMA = {
    "oneOf": [
        {"type": "string", "enum": list(TOOL_MODES)},
        {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": list(TOOL_MODES)},
                "required_function_name": {"type": "string", "maxLength": 128},
            },
            "required": ["mode"],
            "additionalProperties": False,
        },
    ],
    "description": "How the first model call of a turn may use tools.",
}

StoredToolChoice = str | dict[str, str]


def parse_tool_choice(value: Any) -> StoredToolChoice | None:
    """A tool choice as stored: a mode, or the dict naming the function to call first.

    Raises:
        ValueError: Not one of TOOL_CHOICE_FORMS.
    """
    if value is None or (isinstance(value, str) and value in TOOL_MODES):
        return value
    if (
        not isinstance(value, dict)
        or set(value) - {"mode", "required_function_name"}
        or value.get("mode") not in TOOL_MODES
    ):
        raise ValueError(f"must be {TOOL_CHOICE_FORMS}")
    name = value.get("required_function_name")
    if name is None:
        return value["mode"]
    if value["mode"] != "required":
        raise ValueError("a function name goes only with the mode 'required'")
    if not isinstance(name, str) or not _FUNCTION_NAME.fullmatch(name):
        raise ValueError(
            "the function to call first must be named as a tool is: a letter or "
            "'_', then letters, digits and '_.:-', at most 128"
        )
    return {"mode": "required", "required_function_name": name}


ToolChoice = Annotated[
    StoredToolChoice | None,
    PlainValidator(parse_tool_choice),
    WithJsonSchema(_TOOL_CHOICE_SCHEMA),
]
"""How the first model call of a turn may use tools: `auto` (as it likes), `none`
(no tool), `required` (some tool), or `{"mode": "required",
"required_function_name": ...}` (that tool). The agent's choice stands when a
message gives none (docs/availability.md#tool-choice-the-first-call)."""


STARTERS_MAX = 6
STARTER_MAX_CHARS = 200


def parse_starters(value: Any) -> list[str]:
    """An agent's conversation starters as stored: a short list of one-line prompts.

    Each is stripped; at most STARTERS_MAX, each 1 to STARTER_MAX_CHARS characters
    of text that may be stored, on one line, none twice.

    Raises:
        ValueError: Not such a list; the message names the starter at fault.
    """
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("A list of prompts (strings).")
    if len(value) > STARTERS_MAX:
        raise ValueError(f"At most {STARTERS_MAX} starters.")
    starters: list[str] = []
    for number, raw in enumerate(value, start=1):
        problem = _starter_problem(raw.strip(), starters)
        if problem:
            raise ValueError(f"Starter {number}: {problem}")
        starters.append(raw.strip())
    return starters


def _starter_problem(text: str, earlier: list[str]) -> str | None:
    if not text:
        return "it must not be blank."
    if len(text) > STARTER_MAX_CHARS:
        return f"at most {STARTER_MAX_CHARS} characters."
    if "\n" in text or "\r" in text:
        return "one line, no line breaks."
    if text in earlier:
        return "the same as an earlier one."
    return text_problem(text)


HISTORY_MAX = 100_000


def parse_history(value: Any) -> int | None:
    """An agent's history as stored: how many of a session's latest events a turn
    reads, 1 to HISTORY_MAX; None: every event (agents.adk.history).

    Raises:
        ValueError: Neither None nor such a whole number (a bool is no number).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("A whole number of events, or null for every event.")
    if not 1 <= value <= HISTORY_MAX:
        raise ValueError(f"From 1 to {HISTORY_MAX} events, or null for every event.")
    return value


def parse_retention_days(value: Any) -> int | None:
    """An agent's retention as stored: days a session of it is kept after its last
    activity, 0 (forever) to RETENTION_MAX_DAYS; None: the setting's
    (agents.retention).

    Raises:
        ValueError: Neither None nor such a whole number (a bool is no number).
    """
    if value is None:
        return None
    top = RETENTION_MAX_DAYS
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        raise ValueError(
            f"A whole number of days from 0 (kept forever) to {top}, or null for "
            "TOOLCRIB_RETENTION_DAYS."
        )
    return value
