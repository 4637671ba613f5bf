"""The runs API: start a run, read its results and the set's history, cancel."""

import time

import pytest

from agents.models import AgentSpec, AgentVersion
from evals.models import EvalRun
from tests.agents import fake_openai as fake

pytestmark = pytest.mark.django_db(transaction=True)


def wait_ended(client, run_id, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = client.get(f"/api/evalset-runs/{run_id}/").json()
        if run["status"] not in ("queued", "running"):
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not end: {run}")


def test_start_read_and_list_a_run(alice, api_for, demo_agents, weather_set, provider):
    provider.play(
        fake.call("get_weather_report", city="London"),
        fake.say("London is foggy today."),
    )
    client = api_for(alice)

    started = client.post(
        f"/api/evalsets/{weather_set.pk}/runs/",
        {"agent": "weather_sentiment", "threshold": 0.5},
        format="json",
    )

    assert started.status_code == 201, started.content
    assert started.json()["as_user"] == "alice"
    run = wait_ended(client, started.json()["id"])
    assert run["status"] == "succeeded" and run["passed"] is True
    (result,) = run["results"]
    assert result["eval_id"] == "london" and result["status"] == "passed"
    assert result["scores"]["tool_trajectory_avg_score"]["score"] == 1.0
    assert result["actual"][0]["intermediate_data"]["tool_uses"][0]["args"] == {
        "city": "London"
    }
    assert result["expected"]["conversation"][0]["final_response"]["parts"][0][
        "text"
    ] == ("London is foggy today.")
    history = client.get(f"/api/evalsets/{weather_set.pk}/runs/").json()
    assert [r["id"] for r in history] == [run["id"]]


def test_unknown_agent_or_version_is_a_400_per_field(
    alice, api_for, demo_agents, weather_set
):
    client = api_for(alice)
    url = f"/api/evalsets/{weather_set.pk}/runs/"

    unknown = client.post(url, {"agent": "nobody"}, format="json")
    no_version = client.post(
        url, {"agent": "weather_sentiment", "agent_version": 99}, format="json"
    )
    bad_body = client.post(
        url, {"agent": "weather_sentiment", "live": 1}, format="json"
    )

    assert unknown.status_code == 400 and "agent" in unknown.json()
    assert no_version.status_code == 400 and "agent_version" in no_version.json()
    assert bad_body.status_code == 400
    assert not EvalRun.objects.exists()


def test_a_version_of_the_agent_builder_runs(alice, make_user, api_for, weather_set):
    staff = make_user(is_staff=True)
    made = api_for(staff).post(
        "/api/agents/", {"name": "plain", "instruction": "Answer."}, format="json"
    )
    assert made.status_code == 201, made.content
    version = AgentVersion.objects.get(agent__name="plain").number

    started = api_for(alice).post(
        f"/api/evalsets/{weather_set.pk}/runs/",
        {"agent": "plain", "agent_version": version},
        format="json",
    )

    assert started.status_code == 201, started.content
    run = wait_ended(api_for(alice), started.json()["id"])
    assert run["agent_version"] == version
    assert run["results"][0]["status"] in ("passed", "failed")
    assert AgentSpec.objects.filter(name="plain").exists()


def test_cancel_a_queued_run_then_cancel_again_is_409(alice, api_for, weather_set):
    run = EvalRun.objects.create(
        eval_set=weather_set, agent_name="weather_sentiment", as_user=alice
    )
    client = api_for(alice)

    cancelled = client.post(f"/api/evalset-runs/{run.pk}/cancel/")
    again = client.post(f"/api/evalset-runs/{run.pk}/cancel/")

    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert again.status_code == 409
