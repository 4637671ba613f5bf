"""Governance outcomes as expectations: a grant change tested like code."""

import pytest

from agents.models import Delivery
from evals.models import EvalCase, EvalSet
from evals.running.runs import execute_run, start_run
from tests.agents import fake_openai as fake
from tests.agents.notices.conftest import make_destination
from tests.evals.conftest import RECORDED_LONDON, invocation
from toolsets import grants
from toolsets.catalog import sync_catalog
from toolsets.models import Grant, Tool, ToolCall

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def policy_set(alice):
    """A set whose one case asserts that alice's weather call is denied."""
    eval_set = EvalSet.objects.create(owner=alice, name="policy", criteria={})
    EvalCase.objects.create(
        eval_set=eval_set,
        eval_id="no-weather",
        conversation=[
            invocation(
                "weather in london?",
                calls=[("get_weather_report", {"city": "London"}, RECORDED_LONDON)],
            )
        ],
        expectations=[{"kind": "denied", "tool": "get_weather_report"}],
    )
    return eval_set


def run_once(eval_set, user, provider):
    provider.play(fake.call("get_weather_report", city="London"), fake.say("Sorry."))
    run = start_run(
        eval_set=eval_set, user=user, agent="weather_sentiment", dispatch_now=False
    )
    return execute_run(run.pk).results.get()


def test_revoking_a_grant_flips_a_denied_expectation_from_fail_to_pass(
    alice, demo_agents, policy_set, provider
):
    sync_catalog()
    tool = Tool.objects.get(name="get_weather_report")
    grants.update_toolset(toolset=tool.toolset, default_policy="granted_only")
    grant, _ = grants.grant_tool(target=tool, effect=Grant.Effect.ALLOW, user=alice)

    before = run_once(policy_set, alice, provider)
    grants.revoke(grant=grant)
    after = run_once(policy_set, alice, provider)

    assert before.status == "failed", before.error
    assert before.scores["expectations"]["items"][0]["met"] is False
    assert after.status == "passed", (after.error, after.scores)
    assert after.scores["expectations"]["items"][0]["seen"] == ["denied"]
    # The denial is in the audit, in the eval's own session, as alice's.
    denied = ToolCall.objects.get(session_id=after.session_id)
    assert denied.status == "denied" and denied.user_id == alice.pk


def test_a_held_call_is_never_approved_and_meets_its_expectation(
    alice, demo_agents, policy_set, provider
):
    sync_catalog()
    tool = Tool.objects.get(name="get_weather_report")
    grants.update_tool(tool=tool, requires_approval=True)
    case = policy_set.cases.get()
    case.expectations = [{"kind": "held_for_approval", "tool": "get_weather_report"}]
    case.save()
    # A team's webhook that hears of every approval: told nothing of an eval's.
    make_destination(name="team", url="https://hooks.example.com/t", kinds=["approval"])

    result = run_once(policy_set, alice, provider)

    assert result.status == "passed", (result.error, result.scores)
    assert result.actual[0]["status"] == "waiting"
    held = ToolCall.objects.get(session_id=result.session_id)
    assert held.status in ("awaiting_approval", "expired")
    assert held.decided_by is None
    assert not Delivery.objects.exists()
