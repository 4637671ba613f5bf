"""A workflow loaded by many turns at once (a worker's first turns): the agents
inside its graph have their AgentTools adopted once, whole, as a root agent's are."""

import sys

from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool
from google.adk.workflow import Workflow

from agents.adk.agent_tools import SessionAgentTool
from agents.adk.builder import load_code_agent
from agents.adk.nodes import walk_agents
from tests.threads import at_once

ROUNDS = 20
PATH = f"{__name__}.desk"

desk: Workflow | None = None  # made afresh each round, as a module's own workflow


def shout(text: str) -> dict:
    """Shouts a text.

    Args:
        text: What to shout.
    """
    return {"text": text.upper()}


def a_module_level_desk() -> Workflow:
    crier = LlmAgent(name="crier", description="Cries out.", tools=[shout])
    boss = LlmAgent(name="boss", tools=[AgentTool(agent=crier)])
    return Workflow(name="desk", edges=[("START", boss)])


def test_turns_loading_a_workflow_at_once_adopt_its_agents_tools_once(monkeypatch):
    module = sys.modules[__name__]
    for _ in range(ROUNDS):
        monkeypatch.setattr(module, "desk", a_module_level_desk())

        loaded = at_once(lambda i: load_code_agent(PATH))

        workflow = module.desk
        assert all(each is workflow for each in loaded)
        boss = next(a for a in walk_agents(workflow) if a.name == "boss")
        assert [type(tool) for tool in boss.tools] == [SessionAgentTool]
        assert [sub.name for sub in boss.sub_agents] == ["crier"]
        assert boss.tools[0].agent is boss.sub_agents[0]
