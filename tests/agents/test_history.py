"""An agent's history: what a turn reads of a long session, and what the model is sent.

The sessions grow by rows (the user's question, the agent's answer, as ADK stores
them), so 300 events cost one INSERT; the turns after them are real.
"""

import itertools
import time

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.test.utils import CaptureQueriesContext
from google.adk.events import Event as AdkEvent
from google.genai import types

from agents.adk.builder import sync_code_agents
from agents.adk.event_kinds import event_kind
from agents.adk.history import window
from agents.adk.sessions import DjangoSessionService
from agents.models import HISTORY_DEFAULT, AgentSpec, Event, Request, Session
from tests.agents.history_agents import SENT

pytestmark = pytest.mark.django_db(transaction=True)

HISTORY_AGENTS = [
    "tests.agents.history_agents.windowed",
    "tests.agents.history_agents.unbounded",
    "tests.agents.history_agents.defaulted",
    "tests.agents.history_agents.misjudged",
    "tests.agents.test_long_running.exporter",
]
HISTORY_NAMES = {"windowed", "unbounded", "defaulted", "misjudged"}
_ids = itertools.count()


@pytest.fixture
def agents(db, settings):
    settings.TOOLCRIB_AGENTS = [*settings.TOOLCRIB_AGENTS, *HISTORY_AGENTS]
    SENT.clear()
    return {spec.name: spec for spec in sync_code_agents()}


def said(author: str, text: str, *, invocation: str) -> AdkEvent:
    role = "user" if author == "user" else "model"
    return AdkEvent(
        invocation_id=invocation,
        author=author,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
        timestamp=time.time(),
    )


def store(session_id: str, events: list[AdkEvent]) -> None:
    """Store ADK events after the session's last, as the session service would."""
    row = Session.objects.get(pk=session_id)
    rows = []
    for seq, event in enumerate(events, start=row.last_seq + 1):
        rows.append(
            Event(
                session=row,
                seq=seq,
                event_id=event.id,
                invocation_id=event.invocation_id,
                author=event.author,
                kind=event_kind(event),
                timestamp=event.timestamp,
                data=event.model_dump(mode="json", exclude_none=True),
            )
        )
    Event.objects.bulk_create(rows)
    Session.objects.filter(pk=session_id).update(last_seq=row.last_seq + len(rows))


def exchanges(author: str, count: int) -> list[AdkEvent]:
    """`count` turns of two events: question n from the user, answer n from `author`."""
    events = []
    for n in range(count):
        invocation = f"e-filler-{next(_ids)}"
        events.append(said("user", f"question {n}", invocation=invocation))
        events.append(said(author, f"answer {n}", invocation=invocation))
    return events


def conversation(first: int, last: int) -> list[tuple[str, str]]:
    return [
        pair
        for n in range(first, last + 1)
        for pair in (("user", f"question {n}"), ("model", f"answer {n}"))
    ]


def load(session_id: str, config) -> tuple[list[str], list[str]]:
    """The texts of the events get_session returns, and the SQL that read events."""
    row = Session.objects.get(pk=session_id)
    with CaptureQueriesContext(connection) as queries:
        session = async_to_sync(DjangoSessionService().get_session)(
            app_name=row.app_name,
            user_id=row.user_id,
            session_id=row.adk_id,
            config=config,
        )
    texts = [
        "".join(p.text or "" for p in e.content.parts) if e.content else ""
        for e in session.events
    ]
    return texts, [q["sql"] for q in queries if "agents_event" in q["sql"]]


def test_a_code_agent_declares_its_history_and_others_have_the_default(agents):
    assert {name: agents[name].history for name in agents if name in HISTORY_NAMES} == {
        "windowed": 21,
        "unbounded": None,
        "defaulted": HISTORY_DEFAULT,
        "misjudged": HISTORY_DEFAULT,  # 0 is no history: logged, the default kept
    }


def test_a_long_session_loads_only_its_window_in_one_limited_query(
    alice, agents, start_session
):
    session = start_session(alice, "windowed")
    store(session, exchanges("windowed", 150))  # 300 events

    texts, sql = load(session, window(events=21))

    # The newest 21 events, from the first that opens a turn: 20 of them. Read
    # cold: the window (its LIMIT), then the data of that range alone; read again,
    # the events are parsed already (agents.adk.parsed_events): the window only.
    assert texts == [text for _, text in conversation(140, 149)]
    assert len(sql) == 2
    assert "LIMIT 21" in sql[0]
    assert '"agents_event"."seq" >= 281' in sql[1]
    again, sql = load(session, window(events=21))
    assert again == texts
    assert len(sql) == 1


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's query plan")
def test_the_window_is_read_newest_first_by_the_session_seq_index(
    alice, agents, start_session
):
    session = start_session(alice, "windowed")
    store(session, exchanges("windowed", 150))
    _, sql = load(session, window(events=21))

    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql[0]}")
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())

    assert "USING INDEX" in plan, plan
    assert "TEMP B-TREE" not in plan, plan  # no sort of the session's events


def test_the_model_is_sent_the_window_and_the_new_message(
    alice, agents, start_session, say
):
    session = start_session(alice, "windowed")
    store(session, exchanges("windowed", 150))

    run = say(alice, session, "hello")

    assert run["status"] == "succeeded"
    assert SENT[-1] == [*conversation(140, 149), ("user", "hello")]


def test_an_unbounded_agent_is_sent_the_whole_session(
    alice, agents, start_session, say
):
    session = start_session(alice, "unbounded")
    store(session, exchanges("unbounded", 150))

    say(alice, session, "hello")

    assert SENT[-1] == [*conversation(0, 149), ("user", "hello")]


def test_a_turn_longer_than_the_window_is_read_whole(alice, agents, start_session):
    session = start_session(alice, "windowed")
    store(session, exchanges("windowed", 5))
    long_turn = [said("user", "go on", invocation="e-long")] + [
        said("windowed", f"step {n}", invocation="e-long") for n in range(30)
    ]
    store(session, long_turn)

    texts, sql = load(session, window(events=10))

    assert texts == ["go on", *[f"step {n}" for n in range(30)]]
    assert len(sql) == 3  # the window, the rest of its turn, their data


def test_an_answer_to_a_call_older_than_the_window_resumes_it(
    alice, agents, start_session, say, api_for, events_of
):
    AgentSpec.objects.filter(name="exporter").update(history=4)
    session = start_session(alice, "exporter")
    assert say(alice, session, "export sales")["status"] == "waiting"
    call = Request.objects.get(session_id=session, kind=Request.Kind.CALL)
    store(session, exchanges("exporter", 30))  # the chat went on meanwhile

    answered = api_for(alice).post(
        f"/api/sessions/{session}/function-responses/?wait=1",
        {"call_id": call.call_id, "response": {"url": "s3://sales.csv"}},
        format="json",
    )

    assert answered.status_code == 200, answered.content
    assert answered.json()["status"] == "succeeded", answered.content
    assert answered.json()["invocation_id"] == call.invocation_id
    texts = [f["event"].get("text") for f in events_of(alice, session)]
    assert texts[-2] == "The export is ready."


def test_an_approval_older_than_the_window_still_runs_the_tool(
    alice, agents, start_session, say, api_for, events_of
):
    AgentSpec.objects.filter(name="bank").update(history=4)
    session = start_session(alice, "bank")
    assert say(alice, session, 'wire 500 to "bob"')["status"] == "waiting"
    approval = Request.objects.get(session_id=session, kind=Request.Kind.APPROVAL)
    store(session, exchanges("bank", 30))

    decided = api_for(alice).post(
        f"/api/approvals/{approval.id}/decide/?wait=1",
        {"approved": True},
        format="json",
    )

    assert decided.json()["status"] == "succeeded", decided.content
    texts = [f["event"].get("text") for f in events_of(alice, session)]
    assert texts[-2] == "Sent 500.0 dollars to bob."


def test_the_sub_agent_keeps_the_turn_after_its_transfer_left_the_window(
    alice, agents, start_session, say, events_of
):
    AgentSpec.objects.filter(name="customer_support").update(history=4)
    session = start_session(alice, "customer_support")
    say(alice, session, "this is urgent, i cant login")
    for _ in range(3):
        say(alice, session, "how do I export a chart?")

    texts, _ = load(session, window(events=4))
    authors = [
        f["event"]["author"]
        for f in events_of(alice, session)
        if f["event"]["kind"] == "text"
    ]
    kinds = [f["event"]["kind"] for f in events_of(alice, session)]

    assert "transfer" in kinds
    assert "this is urgent, i cant login" not in texts  # the transfer's turn is out
    assert authors[-1] == "support_agent"
