"""agents/search.py: the words of a search, what the search rows follow, and on
PostgreSQL, that its query reads one owner's rows by the GIN index of migration 0032."""

import pytest
from django.db import connection

from agents.models import AgentSpec, Event, Session
from agents.session_list import list_sessions
from agents.sessions import create_session
from agents.search import (
    MAX_TERM_CHARS,
    MAX_TERMS,
    search_sql,
    search_terms,
    snippet_of,
)


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Weather  LONDON", ["weather", "london"]),
        ('"payroll"* -march NEAR(a, b)', ["payroll", "march", "near", "a", "b"]),
        ("'; DROP TABLE x; --", ["drop", "table", "x"]),
        ("snake_case and-dashes", ["snake", "case", "and", "dashes"]),
        ("mañana Straße 東京", ["mañana", "straße", "東京"]),
        ("again again AGAIN", ["again"]),
        ('"*-^():', []),
    ],
)
def test_a_search_is_its_words_and_nothing_else(text, terms):
    assert search_terms(text) == terms


def test_a_snippet_is_the_words_around_the_first_found_marked_and_cut():
    text = " ".join(f"w{n}" for n in range(40)) + " Payroll, march. end"

    parts = snippet_of(text, ["payroll", "mar"])

    shown = "".join(part.text for part in parts)
    assert shown.startswith("…w35 ")
    assert shown.endswith("Payroll, march. end")
    assert [part.text for part in parts if part.match] == ["Payroll", "march"]


def test_a_snippet_marks_what_a_term_begins_else_shows_the_start_unmarked():
    parts = snippet_of("Running late again", ["run"])

    assert [(part.text, part.match) for part in parts] == [
        ("Running", True),
        (" late again", False),
    ]
    assert snippet_of("ran " * 30, ["zzz"])[-1].text.endswith("…")
    assert all(not part.match for part in snippet_of("ran " * 30, ["zzz"]))


def test_a_search_keeps_its_first_words_each_of_a_bounded_length():
    terms = search_terms(" ".join(f"w{n}" for n in range(20)))

    assert terms == [f"w{n}" for n in range(MAX_TERMS)]
    assert search_terms("z" * 500) == ["z" * MAX_TERM_CHARS]


@pytest.mark.django_db
@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="PostgreSQL's plan: tests/agents/test_session_search_postgresql.py",
)
def test_the_search_reads_its_owners_rows_by_the_gin_index_on_postgresql():
    sql, params = search_sql(
        sessions=Session.objects.all(), owner_id=7, terms=["london"], limit=5
    )

    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("RESET enable_seqscan")

    assert "agents_search_doc_owner_vector" in plan, plan
    assert "agents_event" not in plan, plan  # ranked by the stored vectors


def _said(session: Session, seq: int, text: str) -> Event:
    return Event.objects.create(
        session=session,
        seq=seq,
        event_id=f"e{seq}",
        author="user",
        kind="user_message",
        timestamp=float(seq),
        data={"content": {"parts": [{"text": text}]}},
    )


def _found(user, words: str) -> list[str]:
    return [s.pk for s in list_sessions(user=user, search=words).sessions]


@pytest.mark.django_db(transaction=True)
def test_the_search_follows_a_message_changed_deleted_or_flushed(alice, bob):
    agent = AgentSpec.objects.create(name="helper", instruction="Help.")
    session = create_session(user=alice, agent=agent)
    said = _said(session, 1, "the quarterly zeppelin")
    assert _found(alice, "zeppelin") == [session.pk]

    # A message rewritten (a secret masked after the turn, say): its new words only.
    said.data = {"content": {"parts": [{"text": "the quarterly airship"}]}}
    said.save()
    assert _found(alice, "zeppelin") == []
    assert _found(alice, "airship") == [session.pk]

    said.delete()
    assert _found(alice, "airship") == []

    # A session given to bob takes its words to his searches, and out of hers.
    _said(session, 2, "a dirigible")
    session.owner = bob
    session.user_id = str(bob.pk)
    session.save()
    assert _found(alice, "dirigible") == []
    assert _found(bob, "dirigible") == [session.pk]

    with connection.cursor() as cursor:
        table = "agents_search_doc" if connection.vendor == "postgresql" else None
        if table:  # a flush TRUNCATEs; the search rows go with the events
            cursor.execute("TRUNCATE agents_event, agents_run, agents_session CASCADE")
            cursor.execute(f"SELECT count(*) FROM {table}")
            assert cursor.fetchone()[0] == 0
