"""A run's trace is its session owner's and staff's only, and holds no secret."""

import pytest
from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider
from rest_framework.test import APIClient

from agents.models import RunSpan
from agents.observability.recorder import TurnRecorder
from agents.observability.spans import store_spans

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def alices_run(alice, demo_agents, start_session, say) -> dict:
    session = start_session(alice, "weather_sentiment")
    return say(alice, session, "weather in london?")


def trace_url(run: dict) -> str:
    return f"/api/runs/{run['id']}/trace/"


def test_another_user_gets_404_for_alices_trace(alices_run, bob, api_for):
    response = api_for(bob).get(trace_url(alices_run))

    assert response.status_code == 404
    assert response.json() == {"detail": "No such run."}


def test_nobody_signed_in_gets_no_trace(alices_run):
    response = APIClient().get(trace_url(alices_run))

    assert response.status_code in (401, 403)
    assert "spans" not in response.json()


def test_staff_see_alices_trace(alices_run, make_user, api_for):
    staff = make_user("ops", is_staff=True)

    response = api_for(staff).get(trace_url(alices_run))

    assert response.status_code == 200
    assert response.json()["spans"][0]["attributes"]["toolcrib.user"] == "alice"


def test_an_unknown_run_reads_404_like_someone_elses(alice, api_for):
    response = api_for(alice).get(
        "/api/runs/00000000-0000-0000-0000-000000000000/trace/"
    )

    assert response.status_code == 404


def test_a_secret_shaped_span_attribute_is_stored_redacted(alices_run):
    recorder = TurnRecorder(max_spans=10)
    provider = TracerProvider()
    provider.add_span_processor(recorder)
    with provider.get_tracer("test").start_as_current_span(
        "leaky", context=Context()
    ) as span:
        recorder.open(span.get_span_context().trace_id)
        span.set_attribute("http.request.header.authorization", "Bearer s3cret")
        span.set_attribute("tool.api_key", "k-123")
        span.set_attribute("gen_ai.usage.input_tokens", 12)
    store_spans(alices_run["id"], recorder.pop(span.get_span_context().trace_id))
    (row,) = RunSpan.objects.filter(run_id=alices_run["id"], name="leaky")

    assert row.attributes == {
        "http.request.header.authorization": "[redacted]",
        "tool.api_key": "[redacted]",
        "gen_ai.usage.input_tokens": 12,
    }
