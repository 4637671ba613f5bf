"""Which changes of the change audit to list (GET /api/changes/)."""

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, WithJsonSchema

from agents.cursors import Cursor, decode_cursor
from agents.inputs.rule import StoredText


def _cursor(value: Any) -> Cursor | None:
    if value in (None, ""):
        return None
    try:
        if not isinstance(value, str):
            raise ValueError
        cursor = decode_cursor(value)
        int(cursor.id)
    except ValueError:
        raise ValueError("a cursor from this list's `next` link") from None
    return cursor


class ChangeQuery(BaseModel):
    """Changes to one kind of object ("agents.agentspec"), to one object of it, by
    one person (a username), or all; newest first, from `cursor` on."""

    model_config = ConfigDict(extra="ignore")

    kind: Annotated[StoredText, Field(max_length=100)] = ""
    object: Annotated[StoredText, Field(max_length=255)] = ""
    actor: Annotated[StoredText, Field(max_length=150)] = ""
    cursor: Annotated[
        Cursor | None, PlainValidator(_cursor), WithJsonSchema({"type": "string"})
    ] = None
