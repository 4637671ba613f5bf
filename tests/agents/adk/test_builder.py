"""agents.adk.builder.agent_for: an agent tree built once, and again after a change."""

import pytest

from agents.adk.builder import agent_for
from agents.models import AgentSpec

pytestmark = pytest.mark.django_db


def spec(name: str, **fields) -> AgentSpec:
    return AgentSpec.objects.create(name=name, model="offline", **fields)


def fresh(row: AgentSpec) -> AgentSpec:
    return AgentSpec.objects.get(pk=row.pk)


def test_the_tree_is_kept_while_nothing_changes():
    root = spec("desk", instruction="Route questions.")
    root.sub_agents.add(spec("billing"), spec("accounts"))

    first = agent_for(fresh(root))

    assert agent_for(fresh(root)) is first
    assert [sub.name for sub in first.sub_agents] == ["accounts", "billing"]


def test_a_sub_agent_added_or_removed_is_in_the_next_tree():
    root = spec("helpdesk")
    billing, refunds = spec("billing_team"), spec("refunds_team")
    root.sub_agents.add(billing)
    assert [sub.name for sub in agent_for(fresh(root)).sub_agents] == ["billing_team"]

    root.sub_agents.add(refunds)
    assert [sub.name for sub in agent_for(fresh(root)).sub_agents] == [
        "billing_team",
        "refunds_team",
    ]

    root.sub_agents.remove(billing)
    assert [sub.name for sub in agent_for(fresh(root)).sub_agents] == ["refunds_team"]


def test_a_change_to_a_sub_agents_spec_is_in_the_next_tree():
    root = spec("frontdesk")
    child = spec("night_shift", instruction="Answer briefly.")
    root.sub_agents.add(child)
    assert agent_for(fresh(root)).sub_agents[0].instruction == "Answer briefly."

    child.instruction = "Answer at length."
    child.save()

    assert agent_for(fresh(root)).sub_agents[0].instruction == "Answer at length."
