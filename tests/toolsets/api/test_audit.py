"""GET /api/tool-calls/summary/ (the Overview, aggregated on the server) and
GET /api/tool-calls/outcomes/ (what each status counts as), with the audit's own
rule of who sees which calls."""

from datetime import timedelta

import pytest
from django.utils import timezone

from toolsets.audit import GROUPS
from toolsets.call_totals import create_call

pytestmark = pytest.mark.django_db
SUMMARY = "/api/tool-calls/summary/"


def make_call(user, status="ok", *, tool="rockets.launch", ms=10, ago=timedelta(0)):
    at = timezone.now() - ago - timedelta(seconds=1)
    return create_call(
        user=user,
        tool_name=tool.rsplit(".", 1)[-1],
        tool_full_name=tool,
        status=status,
        duration_ms=ms,
        started_at=at,
        finished_at=at,
    )


@pytest.fixture
def calls(alice, bob):
    make_call(alice, "ok", ms=30)
    make_call(alice, "approved")
    make_call(alice, "ok", ms=40)  # the approved call's run
    make_call(bob, "denied", tool="bank.wire_money")
    make_call(bob, "error", tool="secret.tool", ms=5000)
    make_call(bob, "ok", ago=timedelta(days=3))


def test_a_user_sees_only_her_own_calls_in_the_overview(calls, alice, api_for):
    body = api_for(alice).get(SUMMARY).json()

    assert body["kpis"]["calls"] == 2
    assert (body["kpis"]["denied"], body["kpis"]["failed"]) == (0, 0)
    assert body["denials"] == []
    assert [row["tool"] for row in body["slowest"]] == ["rockets.launch"]
    assert sum(sum(b["counts"].values()) for b in body["buckets"]) == 3


def test_another_users_filter_does_not_widen_a_users_overview(
    calls, alice, bob, api_for
):
    body = api_for(alice).get(SUMMARY, {"user": bob.pk}).json()

    assert "secret.tool" not in str(body)
    assert body["kpis"]["calls"] == 2


def test_staff_see_everyones_calls_in_the_overview(calls, staff, api_for):
    body = api_for(staff).get(SUMMARY).json()

    assert body["kpis"]["calls"] == 4  # bob's call three days ago is out of range
    assert body["denials"] == [{"user": "bob", "tool": "bank.wire_money", "count": 1}]
    assert body["slowest"][0] == {
        "tool": "secret.tool",
        "calls": 1,
        "p50_ms": 5000,
        "p95_ms": 5000,
    }
    assert body["kpis"]["p95_ms"] == 5000


def test_the_summary_takes_a_range_and_a_bucket(calls, staff, api_for):
    since = (timezone.now() - timedelta(days=7)).isoformat()

    body = api_for(staff).get(SUMMARY, {"since": since, "bucket": "1d"}).json()

    assert body["bucket"] == "1d"
    assert len(body["buckets"]) == 8
    assert body["kpis"]["calls"] == 5
    assert body["groups"][0] == {"key": "ok", "label": "ran: ok", "statuses": ["ok"]}


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"bucket": "2h"}, "bucket"),
        ({"since": "yesterday"}, "since"),
        ({"until": "2026-13-45"}, "until"),
        ({"since": "2026-01-02T00:00Z", "until": "2026-01-01T00:00Z"}, "since"),
        ({"since": "2000-01-01T00:00Z", "bucket": "1h"}, "bucket"),
        ({"until": "0001-01-01T00:00Z"}, "until"),
    ],
)
def test_bad_summary_parameters_are_400(staff, api_for, query, field):
    response = api_for(staff).get(SUMMARY, query)

    assert response.status_code == 400
    assert field in response.json()


def test_nobody_signed_out_reads_the_summary(calls, client):
    assert client.get(SUMMARY).status_code in {401, 403}
    assert client.get("/api/tool-calls/outcomes/").status_code in {401, 403}


def test_the_outcome_groups_are_served_in_chart_order(alice, api_for):
    body = api_for(alice).get("/api/tool-calls/outcomes/").json()

    assert [group["key"] for group in body] == [group.key for group in GROUPS]
    assert {"key": "held", "label": "held for approval"}.items() <= body[-1].items()
    assert "awaiting_approval" in body[-1]["statuses"]


def test_the_schema_documents_the_summary(alice, api_for):
    paths = api_for(alice).get("/api/schema/?format=json").json()["paths"]

    assert "/api/tool-calls/summary/" in paths
    assert "/api/tool-calls/outcomes/" in paths


@pytest.mark.parametrize("count", [3, 300])
def test_the_summary_costs_the_same_queries_whatever_the_number_of_calls(
    alice, staff, api_for, django_assert_num_queries, count
):
    for index in range(count):
        make_call(
            alice,
            ("ok", "error", "denied", "approved")[index % 4],
            tool=f"t.tool{index % 11}",
            ms=index * 7,
            ago=timedelta(minutes=index * 9),
        )
    client = api_for(staff)
    since = (timezone.now() - timedelta(days=30)).isoformat()

    # The token (2), then the totals: each tool's by status (the counts, the
    # tools, the slowest), the buckets by status, the denials.
    with django_assert_num_queries(5):
        month = client.get(SUMMARY, {"since": since, "bucket": "1d"})
    with django_assert_num_queries(5):
        day = client.get(SUMMARY)

    assert month.json()["kpis"]["calls"] == count - count // 4  # approved: one call
    assert day.json()["kpis"]["calls"] <= month.json()["kpis"]["calls"]
