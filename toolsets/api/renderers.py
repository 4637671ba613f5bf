"""The audit's export formats, CSV and JSON lines, chosen with `?format=csv|jsonl`:
the list streams them (exports.py); these render one call, and the columns."""

import csv
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

from rest_framework.renderers import BaseRenderer

from agents.client_input import replace_surrogates

EXPORT_COLUMNS = [
    "id",
    "started_at",
    "finished_at",
    "duration_ms",
    "user",
    "agent",
    "adk_agent",
    "tool_full_name",
    "tool_name",
    "status",
    "access_rule",
    "decided_by",
    "decided_at",
    "session_id",
    "run_id",
    "invocation_id",
    "call_id",
    "args",
    "result_summary",
    "raw_result_summary",
    "asked_args",
    "approved_args",
    "args_edited_by",
]


class CSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type=None, renderer_context=None
    ) -> bytes:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=EXPORT_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in _rows(data):
            writer.writerow({key: cell(row.get(key)) for key in EXPORT_COLUMNS})
        return out.getvalue().encode(self.charset)


class JSONLinesRenderer(BaseRenderer):
    media_type = "application/jsonl"
    format = "jsonl"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type=None, renderer_context=None
    ) -> bytes:
        lines = [
            json.dumps(row, ensure_ascii=False, default=str) for row in _rows(data)
        ]
        return ("\n".join(lines) + ("\n" if lines else "")).encode(self.charset)


def _rows(data: Any) -> Sequence[Mapping[str, Any]]:
    # A text stored before agents.inputs refused lone surrogates shows as U+FFFD.
    data = replace_surrogates(data)
    return data if isinstance(data, list) else [data]


def cell(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return "" if value is None else value
