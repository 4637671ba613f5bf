"""`final_response_match_v2`: ADK's LLM judge, played by the scripted model server,
runs only when the criterion names a real judge model; a judge that cannot be
reached makes the metric an error, and the case is still recorded."""

import json

import pytest

from evals.models import EvalCaseResult
from evals.running.runs import execute_run, start_run
from evals.scoring.case import score_case
from tests.agents import fake_openai as fake
from tests.evals.conftest import MODEL_NAME, invocation

pytestmark = pytest.mark.django_db(transaction=True)

JUDGE = "final_response_match_v2"


def judged(model=MODEL_NAME, threshold=0.5):
    options = {"judge_model": model, "num_samples": 1} if model else None
    spec = {"threshold": threshold}
    if options:
        spec["judge_model_options"] = options
    return {JUDGE: spec}


def verdict(word):
    return fake.say(
        json.dumps({"reasoning": "compared", "is_the_agent_response_valid": word})
    )


def turn(text, answer):
    return {
        "invocation_id": "i1",
        "user_content": {"role": "user", "parts": [{"text": text}]},
        "intermediate_data": {"tool_uses": [], "tool_responses": []},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
    }


def score(criteria, answer="It is foggy in London."):
    return score_case(
        conversation=[invocation("weather in london?", answer="London is foggy.")],
        case_expectations=[],
        turns=[turn("weather in london?", answer)],
        criteria=criteria,
        session_id="s",
        held=False,
    )


def test_a_judge_saying_valid_scores_one_and_passes(provider):
    provider.play(verdict("valid"))

    scores, passed = score(judged())

    assert scores[JUDGE]["status"] == "passed", scores
    assert scores[JUDGE]["score"] == 1.0 and passed is True
    prompt = provider.requests[0].messages[-1]["content"]
    prompt = prompt if isinstance(prompt, str) else json.dumps(prompt)
    # The judge saw the question, the agent's answer and the expected one.
    for text in ("weather in london?", "It is foggy in London.", "London is foggy."):
        assert text in prompt


def test_a_judge_saying_invalid_scores_zero_and_fails(provider):
    provider.play(verdict("invalid"))

    scores, passed = score(judged(), answer="It is sunny in Paris.")

    assert scores[JUDGE]["status"] == "failed"
    assert scores[JUDGE]["score"] == 0.0 and passed is False


@pytest.mark.parametrize("model", [None, "offline/demo"])
def test_no_real_judge_model_is_not_run(provider, model):
    scores, passed = score(judged(model))

    assert scores[JUDGE]["status"] == "not_run"
    assert "judge model" in scores[JUDGE]["reason"]
    assert passed is True and provider.requests == []


def test_a_judge_that_is_down_is_an_error_not_a_crash(settings):
    settings.TOOLCRIB_MODEL_RETRIES = 0
    settings.TOOLCRIB_MODEL_TIMEOUT = 5
    with fake.FakeOpenAI() as gone:
        pass  # closed: connections are refused
    settings.TOOLCRIB_PROVIDER_ENV = gone.env()

    scores, passed = score(judged())

    assert scores[JUDGE]["status"] == "error"
    assert "Connection error" in scores[JUDGE]["error"]
    assert passed is False


def test_a_run_whose_judge_fails_still_records_the_case(
    alice, demo_agents, weather_set, provider
):
    weather_set.criteria = {**weather_set.criteria, **judged()}
    weather_set.save()
    provider.play(
        fake.call("get_weather_report", city="London"),
        fake.say("London is foggy today."),
        fake.fail(503, "the judge is overloaded"),
    )

    run = start_run(
        eval_set=weather_set, user=alice, dispatch_now=False, agent="weather_sentiment"
    )
    run = execute_run(run.pk)

    result = run.results.get()
    assert result.scores["tool_trajectory_avg_score"]["score"] == 1.0
    assert result.scores[JUDGE]["status"] == "error", result.scores
    assert "the judge is overloaded" in result.scores[JUDGE]["error"]
    assert result.status == EvalCaseResult.Status.FAILED


def test_bad_judge_options_are_refused_in_words():
    from evals.scoring.case import criteria_errors

    bad = {JUDGE: {"threshold": 0.5, "judge_model_options": {"num_samples": 0}}}
    assert criteria_errors(bad) == [
        f"{JUDGE}: judge_model_options is an object of judge_model (a model name) "
        "and num_samples (at least 1)"
    ]
    assert criteria_errors(judged()) == []
