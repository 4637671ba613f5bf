"""Governance's process-global state under a worker's threads: the validators and
policies it keeps (by a tool's code, by what a policy is made of) are each tool's
own, however many calls ask at once; a tool instance is routed through the policy
once, however many turns let its first calls through at once."""

import asyncio
import inspect

import pytest
from google.adk.tools import FunctionTool

from tests.threads import at_once
from toolsets import turn
from toolsets.bindings import Binding, ToolsetInfo
from toolsets.governance import execution, policies
from toolsets.policies import policy, settings_policy

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db

CALLS = 100  # each thread's


def tool_taking(field: str, kind: str) -> FunctionTool:
    """A tool whose one argument, `field`, is of JSON type `kind`."""
    annotation = {"integer": int, "string": str}[kind]

    def tool(**kwargs):
        return kwargs

    tool.__name__ = f"take_{field}"
    tool.__doc__ = f"Takes {field}."
    tool.__signature__ = inspect.Signature(
        [
            inspect.Parameter(
                field, inspect.Parameter.KEYWORD_ONLY, annotation=annotation
            )
        ]
    )
    return FunctionTool(tool)


def test_calls_validating_at_once_each_get_their_tools_validator(monkeypatch):
    monkeypatch.setattr(policies, "MAX_VALIDATORS", 4)  # cleared again and again
    monkeypatch.setattr(policies, "_validators", {})
    tools = [tool_taking(f"f{n}", ("integer", "string")[n % 2]) for n in range(12)]
    good = [{f"f{n}": (1, "one")[n % 2]} for n in range(12)]
    bad = [{f"f{n}": ("one", 1)[n % 2]} for n in range(12)]

    def validate(index: int) -> list[tuple[bool, bool]]:
        return [
            (
                not policies.validator_of(tools[n]).errors(good[n]),
                bool(policies.validator_of(tools[n]).errors(bad[n])),
            )
            for _ in range(CALLS // 10)
            for n in range(12)
        ]

    assert at_once(validate) == [[(True, True)] * (CALLS // 10 * 12)] * 8


def test_calls_asking_for_policies_at_once_each_get_their_tools_own(monkeypatch):
    monkeypatch.setattr(turn, "MAX_POLICIES", 4)
    monkeypatch.setattr(turn, "_policies", {})
    toolset = ToolsetInfo(name="ts")
    bindings = []
    for n in range(12):
        tool = tool_taking(f"f{n}", "integer")
        policy(timeout=n + 1, retries=n % 3)(tool.func)
        bindings.append(Binding(toolset=toolset, name=tool.name, tool=tool))
    expected = [settings_policy(b.full_name, b.tool) for b in bindings]

    def ask(index: int) -> list:
        return [turn.policy_of(b, None) for _ in range(CALLS // 10) for b in bindings]

    assert at_once(ask) == [expected * (CALLS // 10)] * 8


def test_turns_letting_a_tools_first_calls_through_at_once_wrap_it_once():
    ran = []

    def shout(text: str) -> str:
        """Shouts.

        Args:
            text: What.
        """
        ran.append(text)
        return text.upper()

    tool = FunctionTool(shout)

    assert at_once(lambda i: execution.install(tool)) == [True] * 8
    result = asyncio.run(tool.run_async(args={"text": "hi"}, tool_context=None))

    assert result == "HI"
    assert ran == ["hi"]  # outside a governed turn: the plain run, once
    assert getattr(tool.run_async, execution.WRAPPED_ATTR)
