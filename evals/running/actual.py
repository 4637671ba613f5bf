"""What the agent did in an eval case's session, read back from its stored
events and Runs: per turn, the tool calls with their results and the final
answer (ADK's Invocation shape), and the turn's tokens, cost and latency."""

from typing import Any

from google.adk.events import Event as AdkEvent

from agents.models import Event, Run


def turn_of(run: Run) -> dict[str, Any]:
    """One turn as an ADK Invocation (JSON), with Toolcrib's measures beside it."""
    events = []
    if run.invocation_id:
        rows = Event.objects.filter(
            session_id=run.session_id, invocation_id=run.invocation_id, is_adk=True
        ).order_by("seq")
        events = [AdkEvent.model_validate(row.data) for row in rows]
    uses, responses, answer = [], [], ""
    for event in events:
        if event.partial or event.author == "user":
            continue
        for call in event.get_function_calls():
            uses.append({"id": call.id, "name": call.name, "args": call.args or {}})
        for response in event.get_function_responses():
            responses.append(
                {
                    "id": response.id,
                    "name": response.name,
                    "response": response.response,
                }
            )
        text = _text(event)
        if text and not event.get_function_calls():
            answer = text
    latency = 0
    if run.started_at and run.finished_at:
        latency = int((run.finished_at - run.started_at).total_seconds() * 1000)
    errors = sum(1 for r in responses if _is_error(r["response"]))
    return {
        "invocation_id": run.invocation_id,
        "user_content": {"role": "user", "parts": [{"text": run.text}]},
        "intermediate_data": {"tool_uses": uses, "tool_responses": responses},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
        "status": run.status,
        "error": run.error,
        "tokens_in": run.prompt_tokens,
        "tokens_out": run.completion_tokens,
        "cost_micros": run.cost_micros,
        "latency_ms": latency,
        "tool_errors": errors,
    }


def calls_of(turn: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"name": use["name"], "args": use["args"]}
        for use in turn["intermediate_data"]["tool_uses"]
    ]


def answer_of(turn: dict[str, Any]) -> str:
    return turn["final_response"]["parts"][0]["text"]


def _text(event: AdkEvent) -> str:
    if event.content is None or not event.content.parts:
        return ""
    return "".join(
        part.text for part in event.content.parts if part.text and not part.thought
    )


def _is_error(response: Any) -> bool:
    return isinstance(response, dict) and bool(response.get("error"))
