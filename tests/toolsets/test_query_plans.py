"""Day 100 (issue 43): the audit list reads a page, the first or one deep by
`before`, as a range of an index in the list's order, on SQLite with its
statistics: never a sort of every call the filters select."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from toolsets.models import ToolCall

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's planner"),
]
USER_INDEX = "toolsets_to_user_id_633e82_idx"
TIME_INDEX = "toolsets_toolcall_started"


@pytest.fixture
def calls(alice, bob, staff):
    start = timezone.now() - timedelta(days=100)
    users = (alice, bob, staff)
    ToolCall.objects.bulk_create(
        ToolCall(
            user=users[n % 3],
            agent=("bank", "weather", "rocketeer", "search")[n % 4],
            tool_name=f"tool{n % 7}",
            tool_full_name=f"kit.tool{n % 7}",
            status="error" if n % 10 == 0 else "ok",
            # Bursts of three calls at the same second.
            started_at=start + timedelta(seconds=40 * (n // 3)),
            finished_at=start,
        )
        for n in range(6000)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return ToolCall.objects.order_by("-started_at", "-id")


def page_plan(client, params) -> str:
    """The plan of the query that reads the page's rows."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/tool-calls/", {"limit": 100, **params})
    assert response.status_code == 200, response.content
    [sql] = [q["sql"] for q in queries.captured_queries if " LIMIT 100" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
        return "\n".join(row[-1] for row in cursor.fetchall())


@pytest.mark.parametrize(
    ("reader", "filters", "index"),
    [
        ("staff", {}, TIME_INDEX),
        ("staff", {"user": "alice"}, USER_INDEX),
        ("staff", {"agent": "bank"}, "toolcall_agent_started"),
        ("staff", {"status": "error"}, TIME_INDEX),
        ("staff", {"tool": "kit.tool3"}, TIME_INDEX),
        ("alice", {}, USER_INDEX),  # a user's own calls
        ("alice", {"agent": "bank"}, USER_INDEX),
    ],
)
def test_a_deep_page_by_before_is_a_range_of_an_index_with_no_sort(
    calls, api_for, alice, staff, reader, filters, index
):
    client = api_for({"staff": staff, "alice": alice}[reader])
    mine = calls.filter(user=alice) if reader == "alice" else calls
    deep = mine[4000 if reader == "staff" else 1500]

    first = page_plan(client, filters)
    later = page_plan(client, {**filters, "before": deep.pk})

    assert f"USING INDEX {index}" in first, first
    assert f"USING INDEX {index} (" in later and "started_at<" in later, later
    assert "TEMP B-TREE" not in first + later
