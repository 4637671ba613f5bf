"""Migration 0013 names the sessions stored before it after their first user message,
and its search finds what they said before it existed."""

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from agents.models import Session
from agents.session_list import list_sessions

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("agents", "0012_run_cancelled")]


@pytest.fixture
def old_apps():
    """The apps as they were before 0013; the schema is the latest again after."""
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        yield executor.loader.project_state(BEFORE).apps
    finally:
        _migrate_to_latest()


def _migrate_to_latest() -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def _message(Event, session, seq: int, kind: str, *parts: dict) -> None:
    Event.objects.create(
        session=session,
        seq=seq,
        event_id=f"e{seq}",
        author="user" if kind == "user_message" else "bank",
        kind=kind,
        timestamp=float(seq),
        data={"content": {"parts": list(parts)}},
    )


def test_stored_sessions_get_a_title_and_are_found_by_their_words(old_apps):
    User = old_apps.get_model("auth", "User")
    Stored = old_apps.get_model("agents", "Session")
    Event = old_apps.get_model("agents", "Event")
    alice = User.objects.create(username="alice")
    talked = Stored.objects.create(
        id="s1", adk_id="s1", app_name="bank", user_id=str(alice.pk), owner=alice
    )
    silent = Stored.objects.create(
        id="s2", adk_id="s2", app_name="bank", user_id=str(alice.pk), owner=alice
    )
    _message(Event, talked, 1, "run_started")
    _message(
        Event,
        talked,
        2,
        "user_message",
        {"text": "thinking aloud", "thought": True},
        {"text": "\n  Plan the summer offsite\nwith the details"},
    )
    _message(Event, talked, 3, "text", {"text": "The zeppelin leaves at noon."})
    _message(Event, talked, 4, "user_message", {"text": "a later message"})

    _migrate_to_latest()

    assert Session.objects.get(pk="s1").title == "Plan the summer offsite"
    assert Session.objects.get(pk="s2").title == ""
    owner = get_user_model().objects.get(username="alice")
    for words in ("zeppelin", "offsite", "summer plan", "later"):
        page = list_sessions(user=owner, search=words)
        assert [session.pk for session in page.sessions] == [talked.pk], words
    assert list_sessions(user=owner, search="thinking").sessions == []
    assert {s.pk for s in list_sessions(user=owner).sessions} == {"s1", silent.pk}
