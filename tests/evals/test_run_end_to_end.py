"""A run of a set end to end on the scripted model: each case in a hidden session
as its user, tools answered from the recording, scored; nothing of it in the
user's sessions, usage or budgets."""

import pytest

from agents.models import Run, Session
from evals.models import EvalCase, EvalCaseResult, EvalRun
from evals.running.runs import execute_run, start_run
from tests.agents import fake_openai as fake
from tests.evals.conftest import invocation
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)


def run_now(eval_set, user, **options):
    run = start_run(eval_set=eval_set, user=user, dispatch_now=False, **options)
    return execute_run(run.pk)


def test_a_case_replays_the_recorded_result_and_scores(
    alice, demo_agents, weather_set, provider, api_for
):
    provider.play(
        fake.call("get_weather_report", city="London", usage=(100, 5)),
        fake.say("London is foggy today.", usage=(120, 6)),
    )

    run = run_now(weather_set, alice, agent="weather_sentiment")

    assert run.status == EvalRun.Status.SUCCEEDED
    result = run.results.get()
    assert result.status == EvalCaseResult.Status.PASSED, (result.error, result.scores)
    assert result.scores["tool_trajectory_avg_score"]["score"] == 1.0
    assert result.scores["response_match_score"]["score"] == 1.0
    # The model got the recorded result, not the tool's own ("cloudy").
    tool_message = provider.requests[1].messages[-1]
    assert "Recorded: London is foggy." in tool_message["content"]
    assert (result.tokens_in, result.tokens_out) == (220, 11)
    assert run.score == 1.0 and run.passed is True
    assert run.totals["tokens_in"] == 220 and run.totals["errors"] == 0
    # The hidden session is alice's by governance, nobody's by lists.
    session = Session.objects.get(pk=result.session_id)
    assert session.owner_id is None and session.user_id == str(alice.pk)
    assert session.closed_at is not None
    assert api_for(alice).get("/api/sessions/").json()["results"] == []
    assert set(Run.objects.filter(session=session).values_list("eval", flat=True)) == {
        True
    }
    usage = api_for(alice).get("/api/usage/").json()
    assert not usage.get("results") and not usage.get("rows"), usage
    # Governance audited the call in the eval's session, as alice's.
    audited = ToolCall.objects.get(session_id=session.pk)
    assert audited.user_id == alice.pk and audited.tool_name == "get_weather_report"


def test_a_call_with_no_recording_answers_an_error_counted(
    alice, demo_agents, weather_set, provider
):
    provider.play(
        fake.call("get_weather_report", city="London"),
        fake.call("analyze_sentiment", text="nice"),
        fake.say("London is foggy today."),
    )

    run = run_now(weather_set, alice, agent="weather_sentiment")

    result = run.results.get()
    assert result.status == EvalCaseResult.Status.FAILED
    assert result.scores["tool_trajectory_avg_score"]["score"] == 0.0
    assert "no recorded result" in provider.requests[2].messages[-1]["content"]
    assert run.totals["errors"] == 1
    assert run.passed is False


def test_a_malformed_case_errs_and_the_others_run(
    alice, demo_agents, weather_set, provider
):
    EvalCase.objects.create(
        eval_set=weather_set, eval_id="broken", position=1, conversation=[{"x": 1}]
    )
    EvalCase.objects.create(
        eval_set=weather_set,
        eval_id="odd-expectation",
        position=2,
        conversation=[invocation("hi")],
        expectations=[{"kind": "exploded"}],
    )
    provider.play(
        fake.call("get_weather_report", city="London"),
        fake.say("London is foggy today."),
    )

    run = run_now(weather_set, alice, agent="weather_sentiment")

    assert run.status == EvalRun.Status.SUCCEEDED
    by_id = {r.eval_id: r for r in run.results.all()}
    assert by_id["broken"].status == "error"
    assert "malformed invocation" in by_id["broken"].error
    assert by_id["odd-expectation"].status == "error"
    assert "unknown expectation" in by_id["odd-expectation"].error
    assert by_id["london"].status == "passed"
    assert run.score == pytest.approx(1 / 3) and run.passed is False


def test_an_agent_deleted_since_errs_every_case_and_the_run_ends(
    alice, demo_agents, weather_set
):
    run = start_run(
        eval_set=weather_set, user=alice, agent="weather_sentiment", dispatch_now=False
    )
    demo_agents["weather_sentiment"].__class__.objects.filter(
        name="weather_sentiment"
    ).update(is_active=False)

    run = execute_run(run.pk)

    assert run.status == EvalRun.Status.SUCCEEDED
    result = run.results.get()
    assert result.status == "error" and "no longer exists" in result.error
