"""A live server exports its turns' spans over OTLP/HTTP to a real receiver
(oteltest's sink) when OpenTelemetry's endpoint variable is set, and nothing when
it is not."""

import logging
import time
from collections.abc import Iterator

import httpx
import pytest
from oteltest.sink import HttpSink, is_port_in_use
from oteltest.sink.handler import AccumulatingHandler

from tests.agents.secret_agents import AGENT as VAULT_KEEPER
from tests.agents.secret_agents import SECRETS
from tests.live.server import (
    LiveServer,
    daphne,
    free_port,
    prepare_database,
    server_env,
)

QUESTION = "weather in london?"  # one get_weather_report call, then an answer
ANSWER_WORD = "cloudy"  # in the tool's result and the model's answer
OTLP_DEFAULT_PORT = 4318  # where an exporter set up without the variable would send
EXPORT_WAIT = 20.0


@pytest.fixture(scope="module")
def live_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("otlp")


def env_for(folder, name: str, extra: dict[str, str]) -> dict[str, str]:
    env = server_env(
        {
            "DATABASE_URL": f"sqlite:///{folder / f'{name}.sqlite3'}",
            "TOOLCRIB_DATA_DIR": str(folder),
            **extra,
        }
    )
    for variable in (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ):
        if variable not in extra:
            env.pop(variable, None)
    prepare_database(env)
    return env


@pytest.fixture
def sink_on() -> Iterator:
    def start(port: int) -> AccumulatingHandler:
        handler = AccumulatingHandler()
        sink = HttpSink(handler, logging.getLogger("otlp-sink"), port=port)
        sink.start()
        started.append(sink)
        return handler

    started: list[HttpSink] = []
    yield start
    for sink in started:
        sink.stop()


def say(server: LiveServer, text: str, agent: str = "weather_sentiment") -> dict:
    """A turn of an agent (the weather demo's) as alice, over the API; the ended
    run."""
    headers = {"Authorization": f"Token {server.token('alice', 'alice')}"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=60) as client:
        session = client.post("/api/sessions/", json={"agent": agent})
        session.raise_for_status()
        said = client.post(
            f"/api/sessions/{session.json()['id']}/messages/?wait=1",
            json={"text": text},
        )
        said.raise_for_status()
        return said.json()


def exported(handler: AccumulatingHandler) -> list[tuple[dict, object]]:
    """Each exported span with its resource's attributes."""
    spans = []
    for request in handler.telemetry.get_trace_requests():
        for resource_spans in request.pbreq.resource_spans:
            resource = attributes_of(resource_spans.resource.attributes)
            for scope in resource_spans.scope_spans:
                spans.extend((resource, span) for span in scope.spans)
    return spans


def exported_logs(handler: AccumulatingHandler) -> list:
    """Each log record exported (ADK's GenAI events), body and attributes."""
    return [
        record
        for request in handler.telemetry.get_logs_requests()
        for resource_logs in request.pbreq.resource_logs
        for scope in resource_logs.scope_logs
        for record in scope.log_records
    ]


def attributes_of(attributes) -> dict:
    values = {}
    for item in attributes:
        value = item.value
        kind = value.WhichOneof("value")
        values[item.key] = getattr(value, kind) if kind else None
    return values


def wait_for(found):
    """What `found()` returns once it is not empty, within EXPORT_WAIT."""
    deadline = time.monotonic() + EXPORT_WAIT
    while time.monotonic() < deadline:
        if result := found():
            return result
        time.sleep(0.2)
    raise AssertionError("nothing was exported")


def wait_for_turn(handler: AccumulatingHandler, run_id: str) -> list:
    deadline = time.monotonic() + EXPORT_WAIT
    while time.monotonic() < deadline:
        spans = exported(handler)
        turns = [
            span
            for _, span in spans
            if span.name == "toolcrib.turn"
            and attributes_of(span.attributes).get("toolcrib.run_id") == run_id
        ]
        if turns:
            trace_id = turns[0].trace_id
            # The turn span ends last; its children are in the same or an
            # earlier batch.
            return [item for item in spans if item[1].trace_id == trace_id]
        time.sleep(0.2)
    raise AssertionError(f"no toolcrib.turn span for run {run_id} was exported")


def test_a_turns_spans_reach_an_otlp_receiver(live_folder, sink_on, tmp_path):
    port = free_port()
    handler = sink_on(port)
    env = env_for(
        live_folder,
        "exporting",
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_BLRP_SCHEDULE_DELAY": "100",
        },
    )
    with daphne(env, tmp_path / "daphne.log") as server:
        run = say(server, QUESTION)

        spans = wait_for_turn(handler, run["id"])
        logs = wait_for(lambda: exported_logs(handler))

    assert run["status"] == "succeeded"
    resource = spans[0][0]
    assert resource["service.name"] == "toolcrib"
    by_id = {span.span_id: span for _, span in spans}
    (turn,) = [span for span in by_id.values() if span.name == "toolcrib.turn"]
    turn_attributes = attributes_of(turn.attributes)
    assert turn_attributes["toolcrib.session_id"] == run["session"]
    assert turn_attributes["toolcrib.user"] == "alice"
    assert turn_attributes["toolcrib.agent"] == "weather_sentiment"
    assert turn.parent_span_id == b""

    def under_turn(span) -> bool:
        while span.parent_span_id in by_id:
            span = by_id[span.parent_span_id]
        return span is turn

    names = [span.name for span in by_id.values()]
    models = [
        span for span in by_id.values() if span.name.startswith("generate_content")
    ]
    tools = [
        span
        for span in by_id.values()
        if span.name == "execute_tool get_weather_report"
    ]
    assert len(models) == 2, names
    assert len(tools) == 1, names
    assert all(under_turn(span) for span in [*models, *tools])
    assert "toolcrib.event.store" in names and "toolcrib.event.publish" in names
    texts = [
        str(value)
        for span in by_id.values()
        for value in attributes_of(span.attributes).values()
    ]
    texts += [str(record) for record in logs]
    assert not [text for text in texts if QUESTION in text or ANSWER_WORD in text]


def test_a_server_without_the_variable_exports_nothing(live_folder, sink_on, tmp_path):
    if is_port_in_use(OTLP_DEFAULT_PORT):
        pytest.skip("the default OTLP port is taken")
    handler = sink_on(OTLP_DEFAULT_PORT)
    env = env_for(live_folder, "quiet", {"OTEL_BSP_SCHEDULE_DELAY": "100"})
    with daphne(env, tmp_path / "daphne.log") as server:
        run = say(server, QUESTION)
        # Longer than the batch delay an exporter would have waited.
        time.sleep(1.5)
        trace = httpx.get(
            f"{server.url}/api/runs/{run['id']}/trace/",
            headers={"Authorization": f"Token {server.token('alice', 'alice')}"},
        ).json()

    assert run["status"] == "succeeded"
    assert handler.telemetry.get_trace_requests() == []
    assert trace["spans"][0]["name"] == "toolcrib.turn"  # kept for the page


def test_an_exported_turn_shows_no_secret_it_met(live_folder, sink_on, tmp_path):
    port = free_port()
    handler = sink_on(port)
    env = env_for(
        live_folder,
        "secrets",
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_BLRP_SCHEDULE_DELAY": "100",
            # ADK's own content too: instructions, messages, arguments, results.
            "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_AND_EVENT",
            "TOOLCRIB_EXTRA_AGENTS": "tests.agents.secret_agents.vault_keeper",
        },
    )
    server_log = tmp_path / "daphne.log"
    with daphne(env, server_log) as server:
        run = say(server, "keep and sign me in", agent=VAULT_KEEPER)
        spans = wait_for_turn(handler, run["id"])
        time.sleep(1.0)  # ten log batches: the turn's log records are all out
        logs = exported_logs(handler)

    assert run["status"] == "succeeded"
    attributes = [attributes_of(span.attributes) for _, span in spans]
    texts = [str(value) for found in attributes for value in found.values()]
    texts += [str(record) for record in logs]
    texts.append(server_log.read_text())
    assert not [secret for secret in SECRETS if any(secret in t for t in texts)]
    # Redacted where they were: the preferences ADK rendered into the
    # instruction, the password the call was made with.
    instructions = [found.get("toolcrib.model.instruction", "") for found in attributes]
    assert any("'db_password': '[redacted]'" in text for text in instructions)
    arguments = [found.get("gen_ai.tool.call.arguments", "") for found in attributes]
    assert '{"username": "ada", "password": "[redacted]"}' in arguments
    assert "sign_in checks the password [redacted]" in server_log.read_text()
