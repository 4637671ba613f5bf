"""What a client may send: one model per message and one rule for text, on both edges.

A REST view and a socket frame that carry the same message validate it with the
same model from here (agents.realtime.frames wraps them in a `type`), so a rule
holds on both edges at once. The rule for every text that will be stored
(`text_problem`):

- no NUL: PostgreSQL stores it neither in text nor in jsonb;
- no lone surrogate (half of a UTF-16 pair, which JSON's `"\\ud800"` escape makes):
  no UTF-8 encoder accepts one, so a stored one would fail every later read.

JSON, from a request body or a frame, is read by `load_client_json`, which applies
the rule to every string and key and bounds the nesting, since Python's parser and
every serializer after it recurse. Its numbers are numbers JSON can carry back:
finite (`1e400` would read as infinity, which no JSON encoder, PostgreSQL's jsonb
nor SQLite's JSON takes), and integers within Python's limit of digits
(`sys.get_int_max_str_digits()`, 4,300), past which Python refuses to read them. Rows stored before the rule existed are shown
with U+FFFD in place of a lone surrogate (`replace_surrogates`), never refused.
"""

import json
import math
import re
import sys
from collections import deque
from collections.abc import Iterator
from typing import Annotated, Any
from uuid import UUID

from django.conf import settings
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from agents.cursors import Cursor, decode_cursor
from agents.models import RETENTION_MAX_DAYS

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")

Path = tuple[str | int, ...]


class BadJson(ValueError):
    """Not JSON a client may send: malformed, nested too deep, NaN/Infinity, or a
    number out of range."""


class BadText(ValueError):
    """A string or key breaks the text rule; `path` leads to it (keys and indexes)."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{dotted(path)}: {problem}" if path else problem)


def text_problem(text: str) -> str | None:
    """Why `text` may not be stored, or None if it may."""
    if "\x00" in text:
        return "NUL characters are not allowed."
    if _SURROGATE.search(text):
        return "Lone surrogates (half of a UTF-16 pair) are not allowed."
    return None


def text_problems(value: Any) -> Iterator[tuple[Path, str]]:
    """Every string and key of a JSON value that breaks the rule, outermost first."""
    pending: deque[tuple[Path, Any]] = deque([((), value)])
    while pending:
        path, item = pending.popleft()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                yield path, problem
        elif isinstance(item, dict):
            for key, child in item.items():
                problem = text_problem(str(key))
                if problem:  # the path never shows the bad key itself
                    yield path, f"A key: {problem}"
                    continue
                pending.append(((*path, key), child))
        elif isinstance(item, list | tuple):
            pending.extend(((*path, index), child) for index, child in enumerate(item))


def json_depth(value: Any) -> int:
    """How many arrays and objects are nested in a JSON value, at the deepest."""
    deepest = 0
    pending: list[tuple[int, Any]] = [(1, value)]
    while pending:
        depth, item = pending.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list | tuple):
            continue
        deepest = max(deepest, depth)
        pending.extend((depth + 1, child) for child in item)
    return deepest


def check_json(value: Any) -> Any:
    """Refuse a JSON value nested too deep, holding a number JSON cannot carry, or
    holding a text that breaks the rule.

    Raises:
        BadJson: It is nested deeper than TOOLCRIB_MAX_JSON_DEPTH, or holds NaN or
            an infinity (a value parsed elsewhere, such as by the MCP SDK).
        BadText: A string or key breaks the rule.
    """
    limit = settings.TOOLCRIB_MAX_JSON_DEPTH
    if json_depth(value) > limit:
        raise BadJson(_too_deep(limit))
    if not _all_finite(value):
        raise BadJson(NOT_FINITE)
    first = next(text_problems(value), None)
    if first is not None:
        raise BadText(*first)
    return value


def load_json(raw: str | bytes) -> Any:
    """Parse JSON as a client may send it, before any rule for its texts.

    Raises:
        BadJson: Malformed, nested past Python's recursion limit, NaN/Infinity, a
            number out of a float's range, or an integer too long to read.
    """
    try:
        return json.loads(
            raw, parse_constant=_refuse_constant, parse_float=_finite_float
        )
    except RecursionError:
        raise BadJson(_too_deep(settings.TOOLCRIB_MAX_JSON_DEPTH)) from None
    except json.JSONDecodeError as exc:
        raise BadJson(f"Malformed JSON: {exc.msg} at position {exc.pos}.") from None
    except UnicodeDecodeError:
        raise BadJson("Malformed JSON: not UTF-8 text.") from None
    except BadJson:
        raise
    except ValueError:  # int() past sys.get_int_max_str_digits(), the one other
        raise BadJson(_TOO_LONG.format(sys.get_int_max_str_digits())) from None


def load_client_json(raw: str | bytes) -> Any:
    """Parse what a client sent and check it (see load_json and check_json).

    Raises:
        BadJson: Malformed, nested too deep, NaN/Infinity or a number out of range.
        BadText: A string or key breaks the rule.
    """
    return check_json(load_json(raw))


def replace_surrogates(value: Any) -> Any:
    """A copy of a JSON value with U+FFFD for each lone surrogate, in strings and keys.

    Iterative, as text_problems is: a row stored before the depth bound may be deep.
    """
    root = [value]
    pending: list[tuple[list | dict, Any]] = [(root, 0)]
    while pending:
        parent, slot = pending.pop()
        item = parent[slot]
        if isinstance(item, str):
            parent[slot] = _SURROGATE.sub(REPLACEMENT, item)
        elif isinstance(item, dict):
            parent[slot] = copy = {_replaced_key(key): v for key, v in item.items()}
            pending.extend((copy, key) for key in copy)
        elif isinstance(item, list | tuple):
            parent[slot] = copy = list(item)
            pending.extend((copy, index) for index in range(len(copy)))
    return root[0]


def _replaced_key(key: Any) -> Any:
    return _SURROGATE.sub(REPLACEMENT, key) if isinstance(key, str) else key


def dotted(path: Path) -> str:
    return ".".join(str(part) for part in path)


def _too_deep(limit: int) -> str:
    return f"JSON nested deeper than {limit} levels is not accepted."


def _refuse_constant(name: str) -> None:
    raise BadJson(f"Malformed JSON: {name} is not a JSON value.")


NOT_FINITE = "Malformed JSON: a number is out of range (NaN or infinite)."
_TOO_LONG = "Malformed JSON: an integer longer than {} digits is out of range."


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        shown = text if len(text) <= 40 else f"{text[:37]}..."
        raise BadJson(f"Malformed JSON: the number {shown} is out of range.")
    return value


def _all_finite(value: Any) -> bool:
    """Whether no float in a JSON value is NaN or infinite (iterative: a value may
    be deep)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return True


def _check_text(value: str) -> str:
    problem = text_problem(value)
    if problem:
        raise ValueError(problem)
    return value


StoredText = Annotated[str, AfterValidator(_check_text)]
"""A string that will be stored: no NUL, no lone surrogate."""

StoredJson = Annotated[dict[str, Any], AfterValidator(check_json)]
"""A JSON object that will be stored: bounded depth, every string and key a StoredText."""


def _not_too_big(value: dict[str, Any]) -> dict[str, Any]:
    limit = settings.TOOLCRIB_MAX_MESSAGE_CHARS
    if len(json.dumps(value)) > limit:
        raise ValueError(f"response is longer than {limit} characters of JSON")
    return value


CallResult = Annotated[StoredJson, AfterValidator(_not_too_big)]
"""A long-running call's result: a JSON object no longer than a message."""

COMMENT_MAX_CHARS = 2000
Comment = Annotated[
    str,
    Field(max_length=COMMENT_MAX_CHARS),
    AfterValidator(_check_text),
    AfterValidator(str.strip),
]
"""A decider's comment, stored and shown with the decision."""

CallId = Annotated[StoredText, Field(min_length=1, max_length=128)]
Secret = Annotated[StoredText, Field(min_length=1, max_length=4096)]
# Left out rather than null; null is no type in the OpenAPI 3.0 schema.
OptionalSecret = Secret | SkipJsonSchema[None]


class ClientInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


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


class FunctionResponseInput(ClientInput):
    """A long-running call's result; the agent resumes where it paused."""

    call_id: CallId
    response: CallResult


class CallResultInput(ClientInput):
    """A long-running call's result, for the request it answers (by the request's id)."""

    response: CallResult


class CredentialAnswer(ClientInput):
    """The secret, in the fields the request's scheme needs (docs/tools.md)."""

    # A rejected secret must not come back in an error message.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    api_key: OptionalSecret = None
    token: OptionalSecret = None
    username: OptionalSecret = None
    password: OptionalSecret = None
    access_token: OptionalSecret = None
    refresh_token: OptionalSecret = None


RESPONSE_MAX_CHARS = 20_000
AnswerText = Annotated[
    str,
    Field(min_length=1, max_length=RESPONSE_MAX_CHARS),
    AfterValidator(_check_text),
]
"""What a person answers in a tool's place: the caller reads it as the result."""


class DecisionInput(ClientInput):
    """Approve or reject a tool call waiting for approval, with a comment if you like.

    `arguments` (with an approval): run the call with these arguments instead of
    the ones asked, whole (within the tool's schema and its grant's condition).
    `response` (with a rejection): the tool does not run, and its caller (the
    model, or the MCP client) reads this text as its answer.
    `remember` (with an approval, by the requester, where the catalog lets her
    decide her own calls of the tool): approve every later call of the tool in
    this session at once."""

    approved: bool = Field(strict=True)
    comment: Comment = ""
    remember: bool = Field(default=False, strict=True)
    arguments: StoredJson | SkipJsonSchema[None] = None
    response: AnswerText | SkipJsonSchema[None] = None

    @field_validator("remember")
    @classmethod
    def _only_approving(cls, value: bool, info: ValidationInfo) -> bool:
        if value and info.data.get("approved") is False:
            raise ValueError("only an approval is remembered: approve, or leave it out")
        return value

    @field_validator("arguments")
    @classmethod
    def _only_approved(cls, value: Any, info: ValidationInfo) -> Any:
        if value is not None and info.data.get("approved") is False:
            raise ValueError(
                "only an approved call runs with changed arguments: approve, or "
                "leave them out"
            )
        if value is not None:
            _not_too_big(value)
        return value

    @field_validator("response")
    @classmethod
    def _only_rejected(cls, value: Any, info: ValidationInfo) -> Any:
        if value is not None and info.data.get("approved") is True:
            raise ValueError(
                "a response answers in the tool's place, so the call does not run: "
                "reject it, or leave the response out"
            )
        return value

    def answer(self) -> dict[str, Any]:
        """The decision as the answer path takes it."""
        return self.model_dump(
            include={"approved", "comment", "remember", "arguments", "response"},
            exclude_none=True,
        )


DECIDE_AT_ONCE = 100


class BulkDecisionInput(ClientInput):
    """Approve or reject many approvals at once, with one comment: each is decided
    on its own (and may be refused on its own: decided before, not yours)."""

    ids: list[Annotated[int, Field(strict=True, ge=1, le=2**63 - 1)]] = Field(
        min_length=1, max_length=DECIDE_AT_ONCE
    )
    approved: bool = Field(strict=True)
    comment: Comment = ""


TITLE_MAX_CHARS = 120
SEARCH_MAX_CHARS = 200
# A title is one line a person reads: no control character, line or paragraph
# separator, nor the bidirectional overrides that make a text read otherwise.
NOT_IN_A_TITLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def _title(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("a title must not be blank")
    if len(value) > TITLE_MAX_CHARS:
        raise ValueError(f"a title is at most {TITLE_MAX_CHARS} characters")
    if NOT_IN_A_TITLE.search(value):
        raise ValueError("a title is one line of text, without control characters")
    return value


SessionTitle = Annotated[str, AfterValidator(_check_text), AfterValidator(_title)]
"""A session's name: one line of 1 to TITLE_MAX_CHARS characters, stripped."""


class SessionChange(ClientInput):
    """Rename a session, or archive it (true) or bring it back (false)."""

    # Left out when unchanged (a default, never validated): null is no title.
    title: SessionTitle = None  # type: ignore[assignment]
    archived: Annotated[bool, Field(strict=True)] = None  # type: ignore[assignment]

    @model_validator(mode="after")
    def _something(self) -> "SessionChange":
        if self.title is None and self.archived is None:
            raise ValueError("give a title, or archived: true or false")
        return self


def _page_digits(value: Any) -> Any:
    if isinstance(value, str) and not re.fullmatch("[0-9]{1,6}", value):
        raise ValueError("a page number in digits 0-9")
    return value


def _cursor(value: Any) -> Cursor | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise ValueError("a cursor from this list's `next` link")
    try:
        return decode_cursor(value)
    except ValueError:
        raise ValueError("a cursor from this list's `next` link") from None


class SessionQuery(BaseModel):
    """Which of my sessions to list: words they hold, their agent, archived or not,
    and where to start: `cursor` (from the list's `next` link) or a `page` number
    (offset paging, kept for clients written before cursors; a search pages by
    number). Unknown query parameters are left alone."""

    model_config = ConfigDict(extra="ignore")

    search: Annotated[StoredText, Field(max_length=SEARCH_MAX_CHARS)] = ""
    agent: Annotated[StoredText, Field(max_length=100)] = ""
    archived: bool = False
    page: Annotated[int, BeforeValidator(_page_digits), Field(ge=1)] = 1
    cursor: Annotated[
        Cursor | None, PlainValidator(_cursor), WithJsonSchema({"type": "string"})
    ] = None
