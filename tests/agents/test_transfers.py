"""Transfers, escalations, skip_summarization and an agent used as a tool, as users see them."""

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator
from google.adk.agents import LlmAgent
from google.adk.models import LlmRequest
from google.adk.tools import ToolContext
from google.adk.tools.agent_tool import AgentTool
from rest_framework.test import APIClient

from agents.adk.builder import AgentBuildError, load_code_agent, sync_code_agents
from agents.adk.offline import OfflineLlm, OfflineStep, latest_user_text, play_script
from agents.events.wire import EventFrame
from agents.models import AgentSpec, Event
from agents.sessions import create_session
from agents.tokens import issue_token
from project.asgi import application
from tests.agents.test_consumers import ack_and_turn
from toolsets import grants
from toolsets.catalog import sync_catalog
from toolsets.models import Tool, ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
SUMMARY_REQUEST = (
    'summarize "Toolcrib runs agents and their tools on Django with live streams '
    'and many users"'
)


def route_to_billing(question: str, tool_context: ToolContext) -> dict:
    """Hands a billing question to the billing agent.

    Args:
        question: The customer's question.
    """
    tool_context.actions.transfer_to_agent = "billing"
    tool_context.actions.transfer_reason = "The question is about an invoice."
    return {"status": "routed"}


def triage() -> LlmAgent:
    """Routes every question to billing, saying why."""
    billing = LlmAgent(
        name="billing", description="Answers billing questions.", model=OfflineLlm()
    )
    return LlmAgent(
        name="triage",
        model=OfflineLlm(script=[OfflineStep.call("route_to_billing", question="x")]),
        tools=[route_to_billing],
        sub_agents=[billing],
    )


class ByMessageLlm(OfflineLlm):
    """A scripted model with one script per user message (else it answers it)."""

    scripts: dict[str, list[OfflineStep]] = {}

    def answer(self, llm_request: LlmRequest):
        text = latest_user_text(llm_request.contents)
        script = self.scripts.get(text, [OfflineStep.say(f"[desk] about: {text}")])
        return play_script(script, llm_request, "desk")


MODEL_CALLS: list[str] = []


class CountingLlm(OfflineLlm):
    """A scripted model that notes which agent asked it."""

    def answer(self, llm_request: LlmRequest):
        MODEL_CALLS.append(latest_user_text(llm_request.contents))
        return super().answer(llm_request)


def hand_back(tool_context: ToolContext) -> dict:
    """Hands the conversation back: this is not a question for a specialist."""
    tool_context.actions.escalate = True
    tool_context.actions.transfer_reason = "Not a billing question."
    return {"status": "escalated"}


def desk() -> LlmAgent:
    """Sends a question to its specialist, who escalates it: not a loop."""
    specialist = LlmAgent(
        name="specialist",
        model=CountingLlm(
            script=[OfflineStep.call("hand_back"), OfflineStep.say("[specialist] me")]
        ),
        tools=[hand_back],
    )
    model = ByMessageLlm(
        scripts={
            "my invoice": [
                OfflineStep.call("transfer_to_agent", agent_name="specialist"),
                OfflineStep.say("[desk] I will answer that myself."),
            ]
        }
    )
    return LlmAgent(name="desk", model=model, sub_agents=[specialist])


def shout(text: str) -> dict:
    """Shouts a text.

    Args:
        text: What to shout.
    """
    return {"status": "success", "text": text.upper()}


def crier_agent(*, skip: bool = False) -> LlmAgent:
    """A boss that asks its crier, an agent used as a tool (ADK's AgentTool)."""
    crier = LlmAgent(
        name="crier",
        description="Cries a text out.",
        model=OfflineLlm(
            script=[OfflineStep.call("shout", text="hello"), OfflineStep.say("HELLO!")]
        ),
        tools=[shout],
    )
    boss = OfflineLlm(
        script=[OfflineStep.call("crier", request="say hello"), OfflineStep.say("done")]
    )
    return LlmAgent(
        name="boss",
        model=boss,
        tools=[AgentTool(agent=crier, skip_summarization=skip)],
    )


def terse_boss() -> LlmAgent:
    """The boss, whose crier's answer is the turn's answer (skip_summarization)."""
    return crier_agent(skip=True)


def lookup(item: str) -> dict:
    """Looks an item up.

    Args:
        item: Which.
    """
    return {"item": item}


def other_lookup(item: str) -> dict:
    """Looks an item up elsewhere.

    Args:
        item: Which.
    """
    return {"item": item, "elsewhere": True}


other_lookup.__name__ = "lookup"


def twins() -> LlmAgent:
    """Two tools named lookup."""
    return LlmAgent(name="twins", model=OfflineLlm(), tools=[lookup, other_lookup])


@pytest.fixture(autouse=True)
def artifact_storage_dir(settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "artifacts": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "artifacts")},
        },
    }


@pytest.fixture
def agents(db, settings):
    settings.TOOLCRIB_AGENTS = [
        *settings.TOOLCRIB_AGENTS,
        "tests.agents.test_transfers.triage",
        "tests.agents.test_transfers.desk",
        "tests.agents.test_transfers.crier_agent",
        "tests.agents.test_transfers.terse_boss",
    ]
    MODEL_CALLS.clear()
    return {spec.name: spec for spec in sync_code_agents()}


def handoffs_of(api_for, user, run: dict) -> list[dict]:
    found = api_for(user).get(f"/api/runs/{run['id']}/").json()["handoffs"]
    return [{k: v for k, v in h.items() if k != "event_id"} for h in found]


def events(frames: list[dict], kind: str) -> list[dict]:
    return [f["event"] for f in frames if f["event"]["kind"] == kind]


def test_a_transfer_says_from_whom_to_whom(
    alice, agents, start_session, say, events_of, api_for
):
    session = start_session(alice, "customer_support")

    run = say(alice, session, "this is urgent, i cant login")

    transfer = events(events_of(alice, session), "transfer")[0]
    assert transfer["transfer"] == {"from": "main_agent", "to": "support_agent"}
    assert handoffs_of(api_for, alice, run) == [
        {
            "kind": "transfer",
            "from": "main_agent",
            "to": "support_agent",
            "reason": None,
        }
    ]
    stored = api_for(alice).get(f"/api/runs/{run['id']}/").json()["handoffs"][0]
    assert stored["event_id"] == transfer["id"]


def test_a_transfer_says_why_when_the_agent_does(
    alice, agents, start_session, say, events_of, api_for
):
    session = start_session(alice, "triage")

    run = say(alice, session, "why is my invoice so high?")

    transfer = events(events_of(alice, session), "transfer")[0]["transfer"]
    assert transfer == {
        "from": "triage",
        "to": "billing",
        "reason": "The question is about an invoice.",
    }
    assert handoffs_of(api_for, alice, run)[0]["reason"] == transfer["reason"]
    assert events(events_of(alice, session), "text")[-1]["author"] == "billing"


def test_an_escalation_ends_the_loop_and_says_where_control_went(
    alice, agents, start_session, say, events_of, api_for
):
    session = start_session(alice, "editor_loop")

    run = say(alice, session, "write a short text about the sea")

    frames = events_of(alice, session)
    escalation = events(frames, "escalation")
    assert [e["escalation"] for e in escalation] == [
        {
            "from": "reviewer",
            "to": "editor_loop",
            "reason": "The draft is good enough after 3 rounds.",
        }
    ]
    assert [f["event"]["kind"] for f in frames[-2:]] == ["escalation", "run_finished"]
    assert [
        c["name"] for e in events(frames, "function_call") for c in e["function_calls"]
    ] == [
        "write_draft",
        "review_draft",
    ] * 3
    assert handoffs_of(api_for, alice, run) == [
        {
            "kind": "escalation",
            "from": "reviewer",
            "to": "editor_loop",
            "reason": "The draft is good enough after 3 rounds.",
        }
    ]
    drafts = api_for(alice).get(f"/api/sessions/{session}/artifacts/").json()
    assert [(a["filename"], a["latest"]) for a in drafts] == [("draft.txt", 2)]


def test_a_tool_result_can_be_the_answer_itself(
    alice, agents, start_session, say, events_of
):
    session = start_session(alice, "headlines")

    say(alice, session, "headlines about science")

    frames = [f for f in events_of(alice, session) if f["event"]["author"] != "system"]
    assert [f["event"]["kind"] for f in frames] == [
        "user_message",
        "function_call",
        "function_response",
    ]
    last = frames[-1]["event"]
    assert last["actions"]["skip_summarization"] is True
    assert "Comet" in last["function_responses"][0]["response"]["message"]


def test_an_agent_used_as_a_tool_leaves_its_events_in_the_session(
    alice, agents, start_session, say, events_of
):
    session = start_session(alice, "briefing")

    say(alice, session, SUMMARY_REQUEST)

    frames = events_of(alice, session)
    child = [f["event"] for f in frames if f["event"]["author"] == "summarizer"]
    assert [e["kind"] for e in child] == ["function_call", "function_response", "text"]
    call = next(
        e for e in events(frames, "function_call") if e["author"] == "briefing_agent"
    )
    assert {e["branch"] for e in child} == {
        f"summarizer@{call['function_calls'][0]['id']}"
    }
    assert child[-1]["text"].startswith("In short: Toolcrib runs agents")
    stored = Event.objects.filter(session_id=session, author="summarizer")
    assert stored.count() == 3
    answer = events(frames, "text")[-1]
    assert answer["author"] == "briefing_agent"


def test_an_escalation_outside_a_loop_hands_the_turn_to_the_parent(
    alice, agents, start_session, say, events_of, api_for
):
    session = start_session(alice, "desk")

    run = say(alice, session, "my invoice")
    first = events_of(alice, session)
    say(alice, session, "thanks")
    second = events_of(alice, session, after=first[-1]["seq"])

    assert [e["escalation"] for e in events(first, "escalation")] == [
        {"from": "specialist", "to": "desk", "reason": "Not a billing question."}
    ]
    assert events(first, "text")[-1] == {
        **events(first, "text")[-1],
        "author": "desk",
        "text": "[desk] I will answer that myself.",
    }
    assert MODEL_CALLS == ["my invoice"]  # the specialist was asked once, only
    assert [h["kind"] for h in handoffs_of(api_for, alice, run)] == [
        "transfer",
        "escalation",
    ]
    authors = {f["event"]["author"] for f in second} - {"system", "user"}
    assert authors == {"desk"}
    assert events(second, "text")[-1]["text"] == "[desk] about: thanks"


def test_an_agent_tool_runs_its_agent_in_the_session_under_governance(
    alice, agents, start_session, say, events_of
):
    sync_catalog()
    session = start_session(alice, "crier_agent")

    say(alice, session, "say hello loudly")

    frames = events_of(alice, session)
    child = [f["event"] for f in frames if f["event"]["author"] == "crier"]
    assert [e["kind"] for e in child] == ["function_call", "function_response", "text"]
    [call] = [e for e in events(frames, "function_call") if e["author"] == "boss"]
    assert {e["branch"] for e in child} == {f"crier@{call['function_calls'][0]['id']}"}
    assert Event.objects.filter(session_id=session, author="crier").count() == 3
    assert Tool.objects.get(full_name="crier_agent.shout").toolset.name == "crier_agent"
    audit = ToolCall.objects.all()
    assert {(c.tool_full_name, c.status) for c in audit} == {
        ("crier_agent.crier", "ok"),
        ("crier_agent.shout", "ok"),
    }
    assert {c.session_id for c in audit} == {session}
    answer = events(frames, "text")[-1]
    assert (answer["author"], answer["text"]) == ("boss", "done")


def test_an_agent_tools_agent_is_refused_a_tool_its_user_is_denied(
    alice, agents, start_session, say, events_of
):
    sync_catalog()
    shout_row = Tool.objects.get(full_name="crier_agent.shout")
    grants.grant_tool(target=shout_row, effect="deny", user=alice)
    session = start_session(alice, "crier_agent")

    say(alice, session, "say hello loudly")

    [refused] = [
        r["response"]
        for f in events_of(alice, session)
        for r in f["event"]["function_responses"]
        if r["name"] == "shout"
    ]
    assert "not available to you" in refused["error_message"]
    assert ToolCall.objects.get(tool_name="shout").status == "denied"


def test_an_agent_tool_keeps_skip_summarization(
    alice, agents, start_session, say, events_of
):
    session = start_session(alice, "terse_boss")

    say(alice, session, "say hello loudly")

    frames = [
        f["event"] for f in events_of(alice, session) if f["event"]["author"] == "boss"
    ]
    assert [e["kind"] for e in frames] == ["function_call", "function_response"]
    assert frames[-1]["actions"]["skip_summarization"] is True


def test_two_tools_of_one_name_are_refused_when_the_agent_loads():
    with pytest.raises(AgentBuildError) as refused:
        load_code_agent("tests.agents.test_transfers.twins")

    assert str(refused.value) == (
        "agent twins has two tools named 'lookup' (tests.agents.test_transfers.lookup "
        "and tests.agents.test_transfers.other_lookup); rename one"
    )


async def test_the_socket_streams_escalations_and_child_events_as_stored(alice, agents):
    loop_session = await sync(start)(alice, "editor_loop")
    brief_session = await sync(start)(alice, "briefing")

    loop_frames = await turn_over_socket(alice, loop_session, "write a poem about rain")
    brief_frames = await turn_over_socket(alice, brief_session, SUMMARY_REQUEST)

    for frames, session in ((loop_frames, loop_session), (brief_frames, brief_session)):
        stored = await sync(stored_frames)(alice, session)
        assert [f for f in frames if f["seq"] is not None] == stored
        for frame in frames:
            EventFrame.model_validate(frame)
    assert events(loop_frames, "escalation")[0]["escalation"]["to"] == "editor_loop"
    assert {f["event"]["author"] for f in brief_frames} >= {
        "briefing_agent",
        "summarizer",
    }


def start(user, agent: str) -> str:
    return create_session(user=user, agent=AgentSpec.objects.get(name=agent)).id


def stored_frames(user, session: str) -> list[dict]:
    client = APIClient()
    client.force_authenticate(user)
    return client.get(f"/api/sessions/{session}/events/").json()


async def turn_over_socket(user, session: str, text: str) -> list[dict]:
    token = await sync(issue_token)(user=user)
    socket = WebsocketCommunicator(
        application,
        f"/ws/sessions/{session}/",
        headers=[(b"authorization", f"Token {token}".encode())],
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]
    await socket.send_json_to({"type": "message", "text": text})
    _, frames = await ack_and_turn(socket)
    await socket.disconnect()
    return frames
