"""A position in a list ordered by (time, id), newest first: the keyset a client
sends back for the next page (`?cursor=`), opaque to it.

The next page is the rows strictly after the last one shown in that order, found
on an index by the database, so the hundredth page costs what the first does and a
row added meanwhile never shifts one into view twice.
"""

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MAX_CHARS = 400
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Cursor:
    """The last row shown: its time and its id."""

    at: datetime
    id: str


def encode_cursor(*, at: datetime, id: str) -> str:
    """The text a client sends back for the rows after (at, id)."""
    micros = (at - _EPOCH) // timedelta(microseconds=1)
    raw = json.dumps([micros, id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_cursor(text: str) -> Cursor:
    """The position a cursor names; ValueError if it is not one this module made."""
    if not text or len(text) > MAX_CHARS or not text.isascii():
        raise ValueError("not a cursor from this list")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        micros, id_ = json.loads(raw)
        at = _EPOCH + timedelta(microseconds=micros)
    except (binascii.Error, ValueError, TypeError, OverflowError):
        raise ValueError("not a cursor from this list") from None
    if not isinstance(micros, int) or not isinstance(id_, str) or not id_:
        raise ValueError("not a cursor from this list")
    return Cursor(at=at, id=id_)
