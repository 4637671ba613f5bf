"""A change to a session (its title; archived or not; its model), and the query of a user's
list of sessions.
"""

import re
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    WithJsonSchema,
    model_validator,
)

from agents.cursors import Cursor, decode_cursor
from agents.inputs.rule import ClientInput, StoredText, check_text

TITLE_MAX_CHARS = 120
MODEL_MAX_CHARS = 260
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


SessionTitle = Annotated[str, AfterValidator(check_text), AfterValidator(_title)]
"""A session's name: one line of 1 to TITLE_MAX_CHARS characters, stripped."""


class SessionChange(ClientInput):
    """Rename a session, archive it (true) or bring it back (false), or pick the
    model its next turns run on ("": the agent's own; agents.model_picks)."""

    # Left out when unchanged (a default, never validated): null is no title.
    title: SessionTitle = None  # type: ignore[assignment]
    archived: Annotated[bool, Field(strict=True)] = None  # type: ignore[assignment]
    model: Annotated[  # type: ignore[assignment]
        str, Field(strict=True, max_length=MODEL_MAX_CHARS), AfterValidator(str.strip)
    ] = None

    @model_validator(mode="after")
    def _something(self) -> "SessionChange":
        if self.title is None and self.archived is None and self.model is None:
            raise ValueError("give a title, archived: true or false, or a model")
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
