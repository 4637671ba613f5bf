"""The replay plugin's choices: a recording matched by name and arguments, else the
next of that tool; with live tools, only tools the catalog says only read run."""

import pytest

from agents.models import Session
from evals.models import EvalCaseResult, EvalRun, EvalSet
from evals.running.replay import _load, take
from tests.evals.conftest import invocation
from toolsets.models import Tool, Toolset

pytestmark = pytest.mark.django_db


def recorded():
    return [
        {"name": "get", "args": {"id": 1}, "response": {"n": 1}},
        {"name": "get", "args": {"id": 2}, "response": {"n": 2}},
        {"name": "put", "args": {"id": 1}, "response": {"ok": True}},
    ]


def test_same_arguments_first_else_the_next_unused_of_that_tool():
    calls = recorded()

    assert take(calls, "get", {"id": 2})["response"] == {"n": 2}
    assert take(calls, "get", {"id": 9})["response"] == {"n": 1}
    assert take(calls, "get", {"id": 2}) is None  # both used
    assert take(calls, "delete", {}) is None


def test_live_tools_are_only_those_the_catalog_says_read(alice):
    tools = Toolset.objects.create(name="ts")
    Tool.objects.create(toolset=tools, name="get", full_name="ts.get", risk="read")
    Tool.objects.create(toolset=tools, name="put", full_name="ts.put", risk="write")
    eval_set = EvalSet.objects.create(owner=alice, name="s")
    session = Session.objects.create(app_name="a", user_id=str(alice.pk))
    conversation = [
        invocation(
            "q",
            calls=[(c["name"], c["args"], c["response"]) for c in recorded()],
        )
    ]
    for live in (False, True):
        run = EvalRun.objects.create(
            eval_set=eval_set, agent_name="a", as_user=alice, live_tools=live
        )
        EvalCaseResult.objects.filter(session=session).update(session=None)
        EvalCaseResult.objects.create(
            run=run,
            eval_id="c",
            session=session,
            case_snapshot={"conversation": conversation},
        )

        calls, live_names = _load(session.pk)

        assert [c["response"] for c in calls] == [{"n": 1}, {"n": 2}, {"ok": True}]
        assert live_names == ({"get"} if live else set())
