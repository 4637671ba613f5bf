"""Prometheus metrics at /metrics: what a turn, a tool call, a denial and a socket
move, read the way Prometheus reads them (the text exposition, parsed)."""

import json
import re
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator
from django.db import connection
from prometheus_client.parser import text_string_to_metric_families

from agents.doorbell import streams
from agents.models import Run
from project.asgi import application
from tests.agents.test_consumers import auth
from toolsets import grants
from toolsets.catalog import sync_catalog
from toolsets.models import Tool, ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

DASHBOARD = Path(__file__).parents[2] / "deploy" / "grafana" / "toolcrib-dashboard.json"
AGENT = "weather_sentiment"
# The sample names each metric type exposes, after its family's name.
SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "gauge": ("",),
}

Samples = dict[tuple[str, frozenset], float]


@pytest.fixture
def staff(make_user):
    return make_user("operator", is_staff=True)


@pytest.fixture
def scrape(api_for, staff):
    def read() -> Samples:
        response = api_for(staff).get("/metrics")
        assert response.status_code == 200, response.content
        assert response["Content-Type"].startswith("text/plain")
        return {
            (s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(response.content.decode())
            for s in family.samples
        }

    return read


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    return after.get(key, 0.0) - before.get(key, 0.0)


def moved_all(before: Samples, after: Samples, name: str) -> float:
    """The change of a metric summed over all its label values."""
    keys = {k for k in (*before, *after) if k[0] == name}
    return sum(after.get(k, 0.0) - before.get(k, 0.0) for k in keys)


def test_a_turn_with_a_tool_call_moves_turn_tool_model_and_token_metrics(
    alice, demo_agents, start_session, say, scrape
):
    session = start_session(alice, AGENT)
    before = scrape()

    finished = say(alice, session, "weather in london?")

    after = scrape()
    run = Run.objects.get(pk=finished["id"])
    call = ToolCall.objects.get(run_id=run.pk)
    assert call.status == "ok"
    tool = call.tool_full_name
    assert (
        moved(before, after, "toolcrib_turns_total", agent=AGENT, status="succeeded")
        == 1
    )
    assert (
        moved(before, after, "toolcrib_turn_duration_seconds_count", agent=AGENT) == 1
    )
    assert (
        moved(before, after, "toolcrib_tool_calls_total", tool=tool, outcome="ok") == 1
    )
    assert (
        moved(before, after, "toolcrib_tool_call_duration_seconds_count", tool=tool)
        == 1
    )
    assert moved(before, after, "toolcrib_tool_denials_total", tool=tool) == 0
    # The model answered twice: the call, then the text after its result.
    assert moved_all(before, after, "toolcrib_model_call_duration_seconds_count") == 2
    assert run.prompt_tokens > 0 and run.completion_tokens > 0
    assert (
        moved(before, after, "toolcrib_tokens_total", agent=AGENT, direction="input")
        == run.prompt_tokens
    )
    assert (
        moved(before, after, "toolcrib_tokens_total", agent=AGENT, direction="output")
        == run.completion_tokens
    )


def test_a_denied_call_counts_as_a_denial(alice, demo_agents, api_for, scrape):
    sync_catalog()
    tool = "weather_sentiment.get_weather_report"
    grants.grant_tool(
        target=Tool.objects.get(full_name=tool), effect="deny", user=alice
    )
    before = scrape()

    answer = api_for(alice).post(
        f"/api/tools/{tool}/invoke/", {"args": {"city": "london"}}, format="json"
    )

    after = scrape()
    assert answer.status_code == 403
    assert list(ToolCall.objects.values_list("status", flat=True)) == ["denied"]
    assert (
        moved(before, after, "toolcrib_tool_calls_total", tool=tool, outcome="denied")
        == 1
    )
    assert moved(before, after, "toolcrib_tool_denials_total", tool=tool) == 1
    # Denied, it never ran: no time of the tool's.
    assert (
        moved(before, after, "toolcrib_tool_call_duration_seconds_count", tool=tool)
        == 0
    )


def test_queued_turns_are_read_from_the_database_at_scrape(
    alice, demo_agents, start_session, scrape
):
    session = start_session(alice, AGENT)
    before = scrape()

    Run.objects.create(session_id=session, user=alice, text="later")

    after = scrape()
    assert moved(before, after, "toolcrib_queued_turns") == 1
    assert moved(before, after, "toolcrib_approvals_waiting") == 0


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's query plan")
def test_the_queued_count_reads_only_queued_runs_by_their_index():
    count = Run.objects.filter(status=Run.Status.QUEUED)
    sql, params = count.values("pk").query.sql_with_params()

    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())

    # Not the whole table at every scrape: the partial index of queued runs.
    assert "run_queued" in plan, plan


def test_a_failed_publish_is_counted_and_the_turn_still_ends(
    alice, demo_agents, start_session, say, scrape, monkeypatch
):
    session = start_session(alice, AGENT)
    before = scrape()

    async def redis_away(groups, message):
        raise ConnectionError("Redis is restarting")

    with monkeypatch.context() as patched:
        patched.setattr(streams, "asend_to_groups", redis_away)
        finished = say(alice, session, "weather in london?")

    after = scrape()
    assert finished["status"] == "succeeded"
    # Every event of the turn was stored, and each doorbell that failed counted.
    stored = Run.objects.get(pk=finished["id"]).session.events.count()
    assert stored >= 6
    assert moved(before, after, "toolcrib_publish_failures_total") >= stored


async def test_an_open_socket_counts_until_it_disconnects(
    alice, demo_agents, start_session, scrape
):
    session = await sync(start_session)(alice, AGENT)
    before = await sync(scrape)()
    socket = WebsocketCommunicator(
        application, f"/ws/sessions/{session}/", headers=await sync(auth)(alice)
    )
    assert (await socket.connect(timeout=10))[0]

    opened = await sync(scrape)()
    await socket.disconnect()
    closed = await sync(scrape)()

    assert moved(before, opened, "toolcrib_open_sockets", kind="session") == 1
    assert moved(before, closed, "toolcrib_open_sockets", kind="session") == 0


def test_every_dashboard_query_names_a_metric_that_metrics_exposes(
    scrape, api_for, staff
):
    response = api_for(staff).get("/metrics")
    exposed = {
        family.name + suffix
        for family in text_string_to_metric_families(response.content.decode())
        if family.name.startswith("toolcrib_")
        for suffix in SUFFIXES.get(family.type, ("",))
    }
    dashboard = json.loads(DASHBOARD.read_text())

    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    exprs = [t["expr"] for p in panels for t in p.get("targets", [])]
    named = {n for expr in exprs for n in re.findall(r"toolcrib_\w+", expr)}

    assert len(panels) >= 11
    assert all(p.get("targets") for p in panels)
    assert named <= exposed, named - exposed
    assert {i["name"] for i in dashboard["__inputs"]} == {"DS_PROMETHEUS"}
    assert all(p["datasource"]["uid"] == "${DS_PROMETHEUS}" for p in panels)
