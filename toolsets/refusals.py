"""A tool declining a call: the exception whose message is what the model reads.

Raised by the built-in tools (toolsets.builtin) and by the guarded fetching they
share with OpenAPI imports (toolsets.net); `BuiltinTool` turns one into the answer
`{"status": "error", "error_message": ...}`.
"""

from typing import Any


class Refusal(Exception):
    """A built-in tool declines a call; the message is what the model reads."""

    def as_result(self) -> dict[str, Any]:
        return {"status": "error", "error_message": str(self)}
