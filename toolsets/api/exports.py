"""The audit's exports (`?format=csv|jsonl`): every call the filters select,
streamed, in constant memory, with no cap but the `limit` a client gives.

The calls are read CHUNK at a time by key (started_at, id), newest first, each
chunk its own short query on the audit's indexes: no read stays open across the
download (on SQLite a long read would hold the WAL back from its checkpoints) and
no row is kept once written. Under ASGI (Daphne) the body is an async iterator,
each chunk read on the request's own thread, since Django reads a synchronous
iterator into one list before serving it there.
"""

import csv
import io
import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.db.models import QuerySet
from django.http import HttpRequest, StreamingHttpResponse

from agents.client_input import replace_surrogates
from toolsets.api.renderers import EXPORT_COLUMNS, cell
from toolsets.api.serializers import ToolCallSerializer
from toolsets.audit import older_than
from toolsets.models import ToolCall

CHUNK = 2000
MEDIA_TYPES = {"csv": "text/csv", "jsonl": "application/jsonl"}


def export_response(
    *, request: HttpRequest, calls: QuerySet[ToolCall], format: str, limit: int | None
) -> StreamingHttpResponse:
    """A download of `calls` (already scoped and filtered) in `format`."""
    lines = _lines(calls, format=format, limit=limit)
    body = _async(lines) if isinstance(request, ASGIRequest) else lines
    response = StreamingHttpResponse(
        body, content_type=f"{MEDIA_TYPES[format]}; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="tool-calls.{format}"'
    return response


def chunks(calls: QuerySet[ToolCall], *, limit: int | None) -> Iterator[list]:
    """`calls`, newest first, CHUNK (or what `limit` leaves) at a time by key."""
    ordered = calls.order_by("-started_at", "-id")
    left = limit
    last: ToolCall | None = None
    while left is None or left > 0:
        page = ordered
        if last is not None:
            page = older_than(page, started_at=last.started_at, id=last.id)
        size = CHUNK if left is None else min(CHUNK, left)
        rows = list(page[:size])
        if rows:
            yield rows
        if len(rows) < size:
            return
        last = rows[-1]
        left = None if left is None else left - len(rows)


def _lines(
    calls: QuerySet[ToolCall], *, format: str, limit: int | None
) -> Iterator[bytes]:
    write = _csv_writer() if format == "csv" else _jsonl
    serializer = ToolCallSerializer()
    if format == "csv":
        yield write(None)
    for rows in chunks(calls, limit=limit):
        # A text stored before agents.inputs refused lone surrogates shows as U+FFFD.
        data = replace_surrogates([serializer.to_representation(row) for row in rows])
        yield write(data)


def _csv_writer() -> Callable[[Sequence[dict] | None], bytes]:
    def write(rows: Sequence[dict] | None) -> bytes:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=EXPORT_COLUMNS, extrasaction="ignore")
        if rows is None:
            writer.writeheader()
        for row in rows or ():
            writer.writerow({key: cell(row.get(key)) for key in EXPORT_COLUMNS})
        return out.getvalue().encode()

    return write


def _jsonl(rows: Sequence[dict] | None) -> bytes:
    return "".join(
        json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows or ()
    ).encode()


async def _async(lines: Iterator[bytes]) -> AsyncIterator[bytes]:
    # Each step on the request's thread, where its database connection lives.
    step = sync_to_async(next, thread_sensitive=True)
    while (line := await step(lines, None)) is not None:
        yield line
