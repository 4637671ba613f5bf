"""agents.adk.builder under a worker's threads: a code agent loaded by many turns
at once is adopted once, whole, and a spec's tree built at once serves each turn.

A code agent defined at module level is one object per process, and loading it
adopts its AgentTools in place (agents.adk.agent_tools): the first turns of a
worker load it together. tests/project/test_threads_postgresql.py runs this file
on PostgreSQL too.
"""

import sys

import pytest
from django.db import close_old_connections, connection
from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool

from agents.adk.agent_tools import SessionAgentTool
from agents.adk.builder import agent_for, load_code_agent
from agents.models import AgentSpec
from tests.threads import at_once

ROUNDS = 20
PATH = f"{__name__}.boss"

boss: LlmAgent | None = None  # made afresh each round, as a module's own agent


def shout(text: str) -> dict:
    """Shouts a text.

    Args:
        text: What to shout.
    """
    return {"text": text.upper()}


def a_module_level_boss() -> LlmAgent:
    """A boss with two agents used as tools, as a module defines it, not adopted."""
    criers = [
        LlmAgent(name=name, description="Cries out.", tools=[shout])
        for name in ("crier", "herald")
    ]
    return LlmAgent(name="boss", tools=[AgentTool(agent=crier) for crier in criers])


def test_turns_loading_a_code_agent_at_once_adopt_its_agent_tools_once(
    monkeypatch,
):
    module = sys.modules[__name__]
    for _ in range(ROUNDS):
        monkeypatch.setattr(module, "boss", a_module_level_boss())

        loaded = at_once(lambda i: load_code_agent(PATH))

        agent = module.boss
        assert all(each is agent for each in loaded)
        assert [sub.name for sub in agent.sub_agents] == ["crier", "herald"]
        assert [type(tool) for tool in agent.tools] == [SessionAgentTool] * 2
        assert [tool.agent for tool in agent.tools] == agent.sub_agents
        assert all(sub.parent_agent is agent for sub in agent.sub_agents)


def in_thread(call):
    """`call` on a worker thread, whose connection is closed as the thread ends."""

    def run(index: int):
        try:
            return call(index)
        finally:
            close_old_connections()
            connection.close()

    return run


@pytest.mark.django_db(transaction=True)
def test_turns_building_a_specs_tree_at_once_each_get_the_whole_tree():
    root = AgentSpec.objects.create(name="desk", model="offline")
    root.sub_agents.add(
        AgentSpec.objects.create(name="billing", model="offline"),
        AgentSpec.objects.create(name="accounts", model="offline"),
    )

    built = at_once(in_thread(lambda i: agent_for(AgentSpec.objects.get(pk=root.pk))))

    assert [[sub.name for sub in tree.sub_agents] for tree in built] == [
        ["accounts", "billing"]
    ] * 8
    kept = agent_for(AgentSpec.objects.get(pk=root.pk))
    assert any(tree is kept for tree in built)  # one of theirs, kept for the next
