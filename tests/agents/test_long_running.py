"""Long-running tools: the call waits, its result is posted later, the agent resumes."""

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group
from google.adk.agents import LlmAgent
from google.adk.models import LlmRequest, LlmResponse
from google.adk.tools import LongRunningFunctionTool

from agents.adk.builder import sync_code_agents
from agents.adk.long_running import answered_by
from agents.adk.offline import (
    OfflineLlm,
    OfflineStep,
    calls_response,
    text_response,
    trailing_function_responses,
)
from agents.adk.offline_matching import ChosenCall, describe_result
from agents.answers.answer import complete_call
from agents.models import Request, Run
from agents.tokens import issue_token
from agents.turns.start import wait_for_run
from demo.reimbursement import ask_for_approval, reimburse
from project.asgi import application
from tests.agents.test_consumers import ack_and_turn

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
TRIP = 'ask for approval of 500 for "a conference trip"'
EXPENSE = {"purpose": "conference trip", "amount": 500}
TEST_AGENTS = [
    "tests.agents.test_long_running.exporter",
    "tests.agents.test_long_running.paying_agent",
]


def start_export(dataset: str) -> None:
    """Starts exporting a dataset; the result is posted when the export is done.

    Args:
        dataset: The dataset to export.
    """
    return None  # Nothing yet: the invocation pauses until the result comes.


def exporter() -> LlmAgent:
    """Its long-running tool answers nothing at first; the session owner posts the result."""
    script = [
        OfflineStep.call("start_export", dataset="sales"),
        OfflineStep.say("The export is ready."),
    ]
    return LlmAgent(
        name="exporter",
        model=OfflineLlm(script=script),
        tools=[LongRunningFunctionTool(start_export)],
    )


class PayingLlm(OfflineLlm):
    """Plays the reimbursement instruction: ask, wait, and pay once approved."""

    def answer(self, llm_request: LlmRequest) -> LlmResponse:
        results = trailing_function_responses(llm_request.contents)
        if not results:
            return calls_response([ChosenCall("ask_for_approval", dict(EXPENSE))])
        last = results[-1]
        if (
            last.name == "ask_for_approval"
            and last.response.get("status") == "approved"
        ):
            return calls_response([ChosenCall("reimburse", dict(EXPENSE))])
        return text_response(describe_result(last.name, last.response))


def paying_agent() -> LlmAgent:
    """The reimbursement pattern played out: ask, wait, and pay once approved."""
    approval = LongRunningFunctionTool(ask_for_approval)
    return LlmAgent(
        name="paying_agent",
        model=PayingLlm(),
        tools=[reimburse, answered_by(approval, group="managers")],
    )


@pytest.fixture
def agents(db, settings):
    settings.TOOLCRIB_AGENTS = [*settings.TOOLCRIB_AGENTS, *TEST_AGENTS]
    return {spec.name: spec for spec in sync_code_agents()}


@pytest.fixture
def manager(make_user):
    user = make_user("carol")
    Group.objects.get_or_create(name="managers")[0].user_set.add(user)
    return user


@pytest.fixture
def post_response(api_for):
    def post(user, session: str, call_id: str, response, wait: bool = True):
        suffix = "?wait=1" if wait else ""
        return api_for(user).post(
            f"/api/sessions/{session}/function-responses/{suffix}",
            {"call_id": call_id, "response": response},
            format="json",
        )

    return post


@pytest.fixture
def pending(agents, start_session, say):
    """A session of `agent` whose turn left one long-running call waiting."""

    def make(user, agent: str = "reimbursement", text: str = TRIP) -> tuple[str, str]:
        session = start_session(user, agent)
        run = say(user, session, text)
        assert (run["status"], run["waiting_for"]) == ("waiting", "result")
        call = call_request(session_id=session)
        return session, call.call_id

    return make


def call_request(**where) -> Request:
    """The one long-running call's request that matches `where`."""
    return Request.objects.get(kind=Request.Kind.CALL, **where)


def kinds(frames: list[dict]) -> list[str]:
    return [frame["event"]["kind"] for frame in frames]


def test_a_pending_call_shows_on_the_stream_and_in_the_session(
    alice, pending, events_of, api_for
):
    session, call_id = pending(alice)

    frames = events_of(alice, session)
    call = next(f["event"] for f in frames if f["event"]["kind"] == "function_call")
    assert call["long_running_tool_ids"] == [call_id]
    result = next(
        f["event"] for f in frames if f["event"]["kind"] == "function_response"
    )
    assert result["function_responses"][0]["status"] == "pending"
    listed = api_for(alice).get(f"/api/sessions/{session}/calls/").json()
    assert [
        (c["call_id"], c["name"], c["status"], c["answered_by_group"], c["args"])
        for c in listed
    ] == [
        (
            call_id,
            "ask_for_approval",
            "pending",
            "managers",
            {"purpose": "a conference trip", "amount": 500},
        )
    ]


def test_a_managers_answer_resumes_the_same_invocation(
    alice, manager, pending, post_response, events_of, api_for
):
    session, call_id = pending(alice)
    before = events_of(alice, session)[-1]["seq"]
    inbox = api_for(manager).get("/api/calls/").json()

    answered = post_response(manager, session, call_id, {"status": "approved"})

    assert [c["call_id"] for c in inbox] == [call_id]
    assert answered.status_code == 200, answered.content
    assert answered.json()["status"] == "succeeded"
    frames = events_of(alice, session, after=before)
    assert kinds(frames) == [
        "run_started",
        "function_response",
        "text",
        "run_finished",
    ]
    resumed = frames[1]["event"]
    assert resumed["author"] == "user"
    assert resumed["function_responses"][0]["response"] == {"status": "approved"}
    asked = call_request(call_id=call_id)
    assert resumed["invocation_id"] == asked.invocation_id
    assert answered.json()["invocation_id"] == asked.invocation_id
    assert (asked.status, asked.answered_by, asked.response) == (
        "answered",
        manager,
        {"status": "approved"},
    )
    assert api_for(manager).get("/api/calls/").json() == []


def test_once_approved_the_agent_pays(
    alice, manager, pending, post_response, events_of
):
    session, call_id = pending(alice, agent="paying_agent", text="I spent 500")

    post_response(manager, session, call_id, {"status": "approved"})

    results = [
        f["event"]["function_responses"][0]
        for f in events_of(alice, session)
        if f["event"]["kind"] == "function_response"
    ]
    assert [(r["name"], r["status"]) for r in results] == [
        ("ask_for_approval", "pending"),
        ("ask_for_approval", "ok"),
        ("reimburse", "ok"),
    ]


def test_staff_may_answer_for_managers(alice, make_user, pending, post_response):
    session, call_id = pending(alice)

    answered = post_response(make_user(is_staff=True), session, call_id, {"ok": True})

    assert answered.status_code == 200


def test_the_requester_cannot_answer_their_own_request(alice, pending, post_response):
    session, call_id = pending(alice)

    refused = post_response(alice, session, call_id, {"status": "approved"})

    assert refused.status_code == 403
    assert call_request(call_id=call_id).status == "pending"


def test_another_user_finds_no_session_and_changes_nothing(
    alice, bob, pending, post_response, api_for
):
    session, call_id = pending(alice)

    refused = post_response(bob, session, call_id, {"status": "approved"})

    assert refused.status_code == 404
    assert refused.json() == {"detail": "No such session."}
    assert api_for(bob).get(f"/api/sessions/{session}/calls/").status_code == 404
    assert api_for(bob).get("/api/calls/").json() == []
    assert call_request(call_id=call_id).status == "pending"
    assert Run.objects.filter(session_id=session).count() == 1


def test_unknown_and_answered_calls_are_refused(alice, pending, post_response):
    session, call_id = pending(alice, agent="exporter", text="export sales")

    unknown = post_response(alice, session, "adk-nope", {"url": "x"})
    first = post_response(alice, session, call_id, {"url": "s3://x/sales.csv"})
    again = post_response(alice, session, call_id, {"url": "s3://other"})

    assert unknown.status_code == 400
    assert "call_id" in unknown.json()
    assert first.status_code == 200
    assert again.status_code == 400
    assert again.json() == {"call_id": ["This call has already been answered."]}
    assert call_request(call_id=call_id).response == {"url": "s3://x/sales.csv"}
    assert Run.objects.filter(session_id=session).count() == 2


@pytest.mark.parametrize(
    "body",
    [
        {"call_id": "x", "response": "approved"},
        {"response": {}},
        {"call_id": "", "response": {}},
    ],
)
def test_malformed_answers_are_refused(alice, pending, api_for, body):
    session, _ = pending(alice, agent="exporter", text="export sales")

    refused = api_for(alice).post(
        f"/api/sessions/{session}/function-responses/", body, format="json"
    )

    assert refused.status_code == 400


def test_a_tool_that_returns_nothing_pauses_silently(alice, pending, events_of):
    session, call_id = pending(alice, agent="exporter", text="export sales")

    frames = events_of(alice, session)

    assert kinds(frames) == [
        "run_started",
        "user_message",
        "function_call",
        "run_finished",
    ]
    assert frames[2]["event"]["long_running_tool_ids"] == [call_id]


def test_trusted_code_completes_a_call_as_the_owner(alice, pending, events_of):
    session, call_id = pending(alice, agent="exporter", text="export sales")

    run = complete_call(session_id=session, call_id=call_id, response={"url": "u"})

    run = Run.objects.get(pk=run.pk)
    assert run.user == alice
    texts = [f["event"]["text"] for f in wait_for_text(events_of, alice, session)]
    assert texts[-1] == "The export is ready."


def test_a_session_with_a_pending_call_cannot_be_closed(alice, pending, api_for):
    session, _ = pending(alice, agent="exporter", text="export sales")

    refused = api_for(alice).post(f"/api/sessions/{session}/close/")

    assert refused.status_code == 400
    assert "waits for its result" in refused.json()["detail"]


async def test_the_owner_answers_over_the_socket(alice, pending):
    session, call_id = await sync(pending)(alice, agent="exporter", text="export sales")
    socket = await open_socket(alice, session)
    await drain_backlog(socket)

    await socket.send_json_to(
        {"type": "function_response", "call_id": call_id, "response": {"url": "u"}}
    )

    ack, frames = await ack_and_turn(socket)
    assert ack["run"]["id"]
    frames = [f for f in frames if f["seq"] is not None]
    assert kinds(frames) == ["run_started", "function_response", "text", "run_finished"]
    assert frames[2]["event"]["text"] == "The export is ready."
    await socket.disconnect()


async def test_the_socket_refuses_unknown_and_forbidden_answers(alice, pending):
    session, call_id = await sync(pending)(alice)
    socket = await open_socket(alice, session)
    await drain_backlog(socket)

    await socket.send_json_to(
        {"type": "function_response", "call_id": "adk-nope", "response": {}}
    )
    unknown = await socket.receive_json_from(timeout=TIMEOUT)
    await socket.send_json_to(
        {"type": "function_response", "call_id": call_id, "response": {"ok": 1}}
    )
    forbidden = await socket.receive_json_from(timeout=TIMEOUT)
    await socket.send_json_to({"type": "function_response", "call_id": call_id})
    malformed = await socket.receive_json_from(timeout=TIMEOUT)

    assert (unknown["type"], unknown["error"]["code"]) == ("error", "unknown_call")
    assert forbidden["error"]["code"] == "forbidden"
    assert malformed["error"]["code"] == "bad_frame"
    assert await sync(call_request)(call_id=call_id) is not None
    await socket.disconnect()


def wait_for_text(events_of, user, session: str) -> list[dict]:
    run = Run.objects.filter(session_id=session).order_by("-created_at").first()
    wait_for_run(run=run, timeout=TIMEOUT)
    return [f for f in events_of(user, session) if f["event"]["kind"] == "text"]


async def open_socket(user, session: str) -> WebsocketCommunicator:
    token = await sync(issue_token)(user=user)
    socket = WebsocketCommunicator(
        application,
        f"/ws/sessions/{session}/",
        headers=[(b"authorization", f"Token {token}".encode())],
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]
    return socket


async def drain_backlog(socket: WebsocketCommunicator) -> None:
    """Read the replayed backlog up to the end of the last turn."""
    await frames_until_finished(socket)


async def frames_until_finished(socket: WebsocketCommunicator) -> list[dict]:
    frames = []
    while True:
        frame = await socket.receive_json_from(timeout=TIMEOUT)
        if frame["type"] == "event":
            frames.append(frame)
            if frame["event"]["kind"] == "run_finished":
                return frames
