"""Records: the read-before-write gate of progressive exposure (docs/availability.md).

- ``update_record`` is hidden: the model is not offered it until ``get_record`` has
  fetched a record in the same turn, and it is hidden again when the next turn starts.
- A gate refuses, with corrective feedback and without running it, an update of a
  record other than the one fetched in this turn.
- settings.TOOLCRIB_FORCED_FIRST_TOOL makes ``get_record`` the first call of each turn.

With the offline model, type ``get record REC-42``.
"""

from google.adk.agents import LlmAgent
from google.adk.tools import ToolContext

from toolsets.availability import add_tools, gated_by, hidden, turn_data

FETCHED_KEY = "records:fetched"
RECORDS: dict[str, dict] = {
    "REC-42": {"id": "REC-42", "title": "Broken printer", "status": "open"},
    "REC-7": {"id": "REC-7", "title": "New laptop", "status": "open"},
}

INSTRUCTION = """You manage records. Always fetch a record with get_record before
updating it with update_record, and only update the record you fetched."""


def get_record(record_id: str, tool_context: ToolContext) -> dict:
    """Fetch a record by its id; this makes update_record available for it.

    Args:
        record_id: The record's id, e.g. "REC-42".
    """
    record = RECORDS.get(record_id)
    if record is None:
        return {"status": "error", "error_message": f"No record {record_id}."}
    turn_data(tool_context)[FETCHED_KEY] = record_id
    add_tools(tool_context, [update_record])
    return {"status": "success", "record": dict(record)}


def read_before_write(args: dict, tool_context: ToolContext) -> str | None:
    """Refuse an update of a record other than the one fetched in this turn."""
    fetched = turn_data(tool_context).get(FETCHED_KEY)
    requested = args.get("record_id")
    if requested != fetched:
        return (
            f"You must fetch record {requested!r} with get_record before updating "
            f"it. The last record fetched was {fetched!r}."
        )
    return None


@hidden
@gated_by(read_before_write)
def update_record(record_id: str, status: str) -> dict:
    """Update the status of a record fetched in this turn.

    Args:
        record_id: The record's id.
        status: The new status, e.g. "in-progress".
    """
    record = RECORDS[record_id]
    record["status"] = status
    return {"status": "success", "record": dict(record)}


def records() -> LlmAgent:
    """An agent that reads a record before it may write it."""
    return LlmAgent(
        name="records_agent",
        description="Fetches and updates records, read before write.",
        instruction=INSTRUCTION,
        model="offline/demo",
        tools=[get_record, update_record],
    )


# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "records": [
        "Get record REC-42",
        "Get record REC-7",
    ],
}
