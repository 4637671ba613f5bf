"""Many turns find the same changed description at once (toolsets.reviews): the
catalog keeps it once, and the tool stays held until staff approve it."""

import pytest
from django.db import close_old_connections, connection

from tests.threads import at_once
from toolsets import reviews
from toolsets.declarations import digest_of
from toolsets.models import Tool, ToolImport, Toolset

pytestmark = pytest.mark.django_db(transaction=True)

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}}


def in_thread(call):
    def run(index: int):
        try:
            return call(index)
        finally:
            close_old_connections()
            connection.close()

    return run


@pytest.fixture
def tool() -> Tool:
    toolset = Toolset.objects.create(name="calc", source=Toolset.Source.MCP)
    ToolImport.objects.create(name="calc", kind="mcp", registration={}, toolset=toolset)
    row = Tool.objects.create(
        toolset=toolset,
        name="calc_add",
        full_name="calc.calc_add",
        description="Add two integers.",
        parameters=SCHEMA,
    )
    return reviews.approve_tool(tool=row, by=None)


def test_a_change_seen_by_many_turns_at_once_is_kept_once_and_held(tool):
    changed = at_once(
        in_thread(
            lambda i: reviews.record_declared(
                full_name="calc.calc_add", description="Poisoned.", parameters=SCHEMA
            )
        )
    )

    assert changed.count(True) == 1
    row = Tool.objects.select_related("toolset__stored_import").get()
    assert row.description == "Poisoned."
    assert reviews.state_of(row) == reviews.CHANGED
    assert reviews.is_held(row)
    assert row.approved_digest == digest_of("Add two integers.", SCHEMA)
