"""A case's conversation (ADK Invocations, stored as JSON) read: its user turns,
its expected tool calls with their recorded results, its final responses."""

from collections.abc import Sequence
from typing import Any

from google.adk.evaluation.eval_case import (
    Invocation,
    get_all_tool_calls,
    get_all_tool_responses,
)


def invocations(conversation: Sequence[Any]) -> list[Invocation]:
    """ADK's Invocations of a stored conversation (ValueError if malformed)."""
    if not isinstance(conversation, list):
        raise ValueError("the conversation is not a list of invocations")
    try:
        return [Invocation.model_validate(item) for item in conversation]
    except Exception as exc:  # pydantic's ValidationError, said in one line
        raise ValueError(f"malformed invocation: {str(exc).splitlines()[0]}") from exc


def text_of(content: Any) -> str:
    if content is None or not content.parts:
        return ""
    return "\n".join(part.text for part in content.parts if part.text)


def expected_calls(invocation: Invocation) -> list[dict[str, Any]]:
    return [
        {"name": call.name, "args": dict(call.args or {})}
        for call in get_all_tool_calls(invocation.intermediate_data)
    ]


def recorded_calls(conversation: Sequence[Any]) -> list[dict[str, Any]]:
    """Every expected call of the case, in order, with its recorded response: the
    response of the same call id, else the one at the same place."""
    calls = []
    for invocation in invocations(conversation):
        uses = get_all_tool_calls(invocation.intermediate_data)
        responses = get_all_tool_responses(invocation.intermediate_data)
        by_id = {r.id: r for r in responses if r.id}
        for index, use in enumerate(uses):
            response = by_id.get(use.id) if use.id else None
            if response is None and index < len(responses):
                response = responses[index]
            calls.append(
                {
                    "name": use.name,
                    "args": dict(use.args or {}),
                    "response": response.response if response is not None else None,
                }
            )
    return calls
