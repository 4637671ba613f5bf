"""See inside a turn on the production path: a turn a Celery worker ran on
PostgreSQL has its trace (the worker's spans, stored with its run) and its stats,
read from a web process; and the worker serves the turn's metrics on its own port,
as Prometheus scrapes it (docs/observability.md)."""

from contextlib import ExitStack

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration import services
from tests.integration.clients import Client
from tests.live.server import celery_worker, daphne, free_port

pytestmark = pytest.mark.integration

AGENT = "weather_sentiment"
QUESTION = "weather in london?"  # one get_weather_report call, then an answer


async def test_a_turn_on_a_worker_has_its_trace_and_stats(cluster):
    client = Client.sign_in(cluster.webs[0], "alice")
    session = await client.create_session(AGENT)

    run = await client.wait_for_run(await client.say(session, QUESTION))

    assert run["status"] == "succeeded", run
    async with client.on(cluster.webs[1]).http() as http:
        response = await http.get(f"/api/runs/{run['id']}/trace/")
    assert response.status_code == 200, response.text
    trace = response.json()
    assert trace["run"]["tool_calls"] == 1 and trace["run"]["model_calls"] == 2
    assert trace["run"]["model"] and trace["run"]["tokens"]["input"] > 0
    spans = {span["id"]: span for span in trace["spans"]}
    kinds = [span["kind"] for span in trace["spans"]]
    assert kinds[0] == "turn"
    assert {"agent", "model", "tool", "governance", "store", "publish"} <= set(kinds)
    turn = trace["spans"][0]
    assert turn["attributes"]["toolcrib.user"] == "alice"
    assert turn["attributes"]["toolcrib.run_id"] == run["id"]
    # The tool's span sits inside the turn, under an agent of its own.
    (tool,) = [span for span in trace["spans"] if span["kind"] == "tool"]
    ancestors = []
    parent = tool["parent"]
    while parent:
        ancestors.append(spans[parent]["kind"])
        parent = spans[parent]["parent"]
    assert ancestors[-1] == "turn" and "agent" in ancestors
    assert tool["agent"] and 0 <= tool["offset_ms"] <= turn["duration_ms"]


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def test_a_worker_serves_the_metrics_of_the_turns_it_ran(
    integration_env, tmp_path
):
    port = free_port()
    env = {
        **integration_env,
        "TOOLCRIB_CELERY_QUEUE": services.run_name(),
        "TOOLCRIB_WORKER_METRICS_PORT": str(port),
    }
    with ExitStack() as stack:
        web, _ = services.start_together(
            stack,
            daphne(env, tmp_path / "daphne.log"),
            celery_worker(env, tmp_path / "worker.log", pool="threads"),
        )
        client = Client.sign_in(web, "alice")
        session = await client.create_session(AGENT)

        run = await client.wait_for_run(await client.say(session, QUESTION))

        assert run["status"] == "succeeded", run
        async with httpx.AsyncClient() as http:
            scraped = await http.get(f"http://127.0.0.1:{port}/metrics")
        assert scraped.status_code == 200
        metrics = samples(scraped.text)
        turns = (
            "toolcrib_turns_total",
            frozenset({"agent": AGENT, "status": "succeeded"}.items()),
        )
        assert metrics[turns] == 1
        calls = [
            value
            for (name, labels), value in metrics.items()
            if name == "toolcrib_tool_calls_total" and ("outcome", "ok") in labels
        ]
        assert calls == [1.0]
        models = [
            value
            for (name, _), value in metrics.items()
            if name == "toolcrib_model_call_duration_seconds_count"
        ]
        assert sum(models) == 2
