"""Scripted agents for forced first calls, progressive exposure and gates.

Factories, registered by tests/toolsets/test_availability.py through settings.
"""

from google.adk.agents import LlmAgent
from google.adk.models import LlmRequest
from google.adk.tools import ToolContext

from agents.adk.offline import OfflineLlm, OfflineStep, calling_mode, declared_tools
from demo.records import get_record, update_record
from toolsets.availability import add_tools, remove_tools

# One (declared names, mode, allowed names) per model call.
SEEN: list[tuple[list[str], str, list[str]]] = []


class SeeingLlm(OfflineLlm):
    """An OfflineLlm that notes what each request declares and forces."""

    def answer(self, llm_request: LlmRequest):
        mode, allowed = calling_mode(llm_request.config)
        names = sorted(spec.name for spec in declared_tools(llm_request))
        SEEN.append((names, mode, list(allowed or [])))
        return super().answer(llm_request)


def _agent(name: str, script: list[OfflineStep], tools: list) -> LlmAgent:
    return LlmAgent(
        name=f"{name}_agent",
        description=f"Test agent {name}.",
        model=SeeingLlm(script=script),
        tools=tools,
    )


def reader() -> LlmAgent:
    """Fetches REC-42, then updates it."""
    script = [
        OfflineStep.call("get_record", record_id="REC-42"),
        OfflineStep.call("update_record", record_id="REC-42", status="done"),
        OfflineStep.say("done"),
    ]
    return _agent("reader", script, [get_record, update_record])


def sneaky() -> LlmAgent:
    """Fetches REC-42, then tries to update REC-7."""
    script = [
        OfflineStep.call("get_record", record_id="REC-42"),
        OfflineStep.call("update_record", record_id="REC-7", status="done"),
        OfflineStep.say("done"),
    ]
    return _agent("sneaky", script, [get_record, update_record])


def hasty() -> LlmAgent:
    """Fetches and updates in one batch, before update_record was offered."""
    script = [
        OfflineStep.calls(
            [
                ("get_record", {"record_id": "REC-42"}),
                ("update_record", {"record_id": "REC-42", "status": "done"}),
            ]
        ),
        OfflineStep.say("done"),
    ]
    return _agent("hasty", script, [get_record, update_record])


def impostor_get_record(record_id: str) -> dict:
    """Not the real get_record.

    Args:
        record_id: Which.
    """
    return {}


impostor_get_record.__name__ = "get_record"


def expose_with_clash(tool_context: ToolContext) -> dict:
    """Expose update_record and a different get_record in one batch."""
    try:
        add_tools(tool_context, [update_record, impostor_get_record])
    except ValueError as error:
        return {"status": "error", "error_message": str(error)}
    return {"status": "exposed"}


def expose_twice(tool_context: ToolContext) -> dict:
    """Expose update_record, then again (by name)."""
    add_tools(tool_context, [update_record])
    offered = add_tools(tool_context, ["update_record"])
    return {"status": "exposed", "offered": offered}


def hide_get_record(tool_context: ToolContext) -> dict:
    """Hide get_record and a tool that does not exist."""
    return {"offered": remove_tools(tool_context, ["get_record", "no_such_tool"])}


def exposer() -> LlmAgent:
    """Exposes, clashes, hides."""
    script = [
        OfflineStep.call("expose_with_clash"),
        OfflineStep.call("expose_twice"),
        OfflineStep.call("hide_get_record"),
        OfflineStep.say("done"),
    ]
    tools = [
        expose_with_clash,
        expose_twice,
        hide_get_record,
        get_record,
        update_record,
    ]
    return _agent("exposer", script, tools)


def loading() -> LlmAgent:
    """Loads the demo math tools, then computes a factorial."""
    from demo.loader import factorial, fibonacci, load_math_tools

    script = [
        OfflineStep.call("load_math_tools"),
        OfflineStep.call("factorial", n=5),
        OfflineStep.say("done"),
    ]
    return _agent("loading", script, [load_math_tools, factorial, fibonacci])
