"""An agent run as a tool (an AgentTool's, or a single-turn sub-agent) answers its
caller: it is never offered a transfer out of the tool, and a transfer it calls
anyway is an error it reads, not a transfer (agents.adk.agent_tools)."""

import pytest
from google.adk.agents import LlmAgent
from google.adk.models import LlmRequest
from google.adk.tools.agent_tool import AgentTool

from agents.adk import model_steps
from agents.adk.builder import AgentBuildError, load_code_agent, sync_code_agents
from agents.adk.offline import OfflineLlm, OfflineStep, agent_name
from agents.models import RunSpan
from tests.agents.test_transfers import SUMMARY_REQUEST

pytestmark = pytest.mark.django_db(transaction=True)

REQUEST = "approve the travel budget and the expense reports"
# What each agent's model was offered, step by step: agent -> [tool names].
OFFERED: dict[str, list[list[str]]] = {}


class OfferedLlm(OfflineLlm):
    """The offline model, noting the tools each step offers."""

    def answer(self, llm_request: LlmRequest):
        offered = sorted(llm_request.tools_dict)
        OFFERED.setdefault(agent_name(llm_request), []).append(offered)
        return super().answer(llm_request)


def office(clerk_model: OfflineLlm | None = None) -> LlmAgent:
    """A boss whose clerk is an AgentTool; the boss's description matches the
    request the clerk gets, so the offline model would hand it back if it could."""
    clerk = LlmAgent(
        name="clerk",
        description="Files papers.",
        instruction="File the papers you are given.",
        model=clerk_model or OfferedLlm(),
    )
    boss = OfferedLlm(
        script=[OfflineStep.call("clerk", request=REQUEST), OfflineStep.say("done")]
    )
    return LlmAgent(
        name="boss",
        description="Approves the travel budget and the expense reports.",
        model=boss,
        tools=[AgentTool(agent=clerk)],
    )


def stubborn_office() -> LlmAgent:
    """The clerk calls transfer_to_agent to its boss though it is not offered it."""
    return office(
        OfferedLlm(
            script=[
                OfflineStep.call("transfer_to_agent", agent_name="boss"),
                OfflineStep.say("filed"),
            ]
        )
    )


def chatty_office() -> LlmAgent:
    """The clerk has a chat sub-agent: a transfer to it would leave the tool."""
    intern = LlmAgent(name="intern", description="Helps the clerk.")
    clerk = LlmAgent(name="clerk", description="Files papers.", sub_agents=[intern])
    return LlmAgent(name="boss", tools=[AgentTool(agent=clerk)])


@pytest.fixture
def agents(settings):
    settings.TOOLCRIB_AGENTS = [
        *settings.TOOLCRIB_AGENTS,
        "tests.agents.adk.test_agent_tools.office",
        "tests.agents.adk.test_agent_tools.stubborn_office",
    ]
    OFFERED.clear()
    return {spec.name: spec for spec in sync_code_agents()}


def of(frames: list[dict], author: str) -> list[dict]:
    return [f["event"] for f in frames if f["event"]["author"] == author]


def answer_of(frames: list[dict], tool: str) -> dict:
    [answer] = [
        r["response"]
        for e in of(frames, "boss")
        for r in e["function_responses"]
        if r["name"] == tool
    ]
    return answer


def test_an_agent_tools_child_is_offered_no_transfer_and_answers_the_tool(
    alice, agents, start_session, say, events_of
):
    session = start_session(alice, "office")

    say(alice, session, "please see to the papers")

    frames = events_of(alice, session)
    assert OFFERED["clerk"] == [[]]
    assert answer_of(frames, "clerk") == {"result": f"You said: {REQUEST}"}
    assert [e["kind"] for e in of(frames, "clerk")] == ["text"]
    assert not [f for f in frames if f["event"]["kind"] == "transfer"]
    assert of(frames, "boss")[-1]["text"] == "done"


def test_a_transfer_the_child_calls_anyway_is_an_error_not_a_transfer(
    alice, agents, start_session, say, events_of
):
    session = start_session(alice, "stubborn_office")

    say(alice, session, "please see to the papers")

    frames = events_of(alice, session)
    [refused] = [
        r["response"]
        for e in of(frames, "clerk")
        for r in e["function_responses"]
        if r["name"] == "transfer_to_agent"
    ]
    assert "no tool with that name is available" in refused["error"]
    assert not [f for f in frames if f["event"]["kind"] == "transfer"]
    assert answer_of(frames, "clerk") == {"result": "filed"}
    assert of(frames, "boss")[-1]["text"] == "done"


def test_the_demo_summarizer_is_offered_only_its_own_tool(
    alice, demo_agents, start_session, say
):
    session = start_session(alice, "briefing")

    run = say(alice, session, SUMMARY_REQUEST)

    steps = RunSpan.objects.filter(run_id=run["id"], name=model_steps.MODEL_STEP_SPAN)
    offered = [
        s.attributes[model_steps.TOOLS]
        for s in steps
        if s.attributes[model_steps.AGENT] == "summarizer"
    ]
    assert offered == [["shorten"], ["shorten"]]


def test_an_agent_run_as_a_tool_with_a_chat_sub_agent_is_refused_when_it_loads():
    with pytest.raises(AgentBuildError) as refused:
        load_code_agent("tests.agents.adk.test_agent_tools.chatty_office")

    assert "clerk runs as a tool" in str(refused.value)
    assert "intern" in str(refused.value)
