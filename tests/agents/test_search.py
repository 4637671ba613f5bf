"""agents/search.py: the words of a search, what the search rows follow, and on
PostgreSQL, that its query reads one owner's rows by her own keys (migration 0048)."""

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from agents.models import AgentSpec, Event, Session
from agents.search import (
    MAX_TERM_CHARS,
    MAX_TERMS,
    search_sql,
    search_terms,
    snippet_of,
)
from agents.session_list import list_sessions
from agents.sessions import create_session


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
def test_the_search_reads_its_owners_rows_by_the_gin_index_on_postgresql(alice, bob):
    def words(seq: int) -> str:  # a word in one message of ten
        return f"london weather {seq}" if seq % 10 == 0 else f"paris rain {seq}"

    agent = AgentSpec.objects.create(name="helper", instruction="Help.")
    for user in (alice, bob):
        for n in range(20):
            session = create_session(user=user, agent=agent)
            Session.objects.filter(pk=session.pk).update(title=f"plans {n}")
            Event.objects.bulk_create(
                Event(
                    session=session,
                    seq=seq,
                    event_id=f"e{seq}",
                    author="user",
                    kind="user_message",
                    timestamp=float(seq),
                    data={"content": {"parts": [{"text": words(seq)}]}},
                )
                for seq in range(1, 30)
            )
    sql, params = search_sql(
        sessions=Session.objects.filter(owner=alice),
        owner_id=alice.pk,
        terms=["london"],
        limit=5,
    )

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
        cursor.execute("SET enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("RESET enable_seqscan")

    assert "Function Scan on agents_search_newest" in plan, plan  # messages
    assert "agents_search_title_doc_words" in plan, plan
    assert f"Index Cond: ((owner_id = {alice.pk}) AND" in plan, plan  # a key
    assert "agents_event" not in plan, plan  # counted from the search rows

    # Inside agents_search_newest: her keys of a stretch of event ids (migration
    # 0048), by the expression's GIN index; another owner's keys are other keys.
    stretch = (
        "SELECT d.session_id, d.event_id FROM agents_search_doc AS d"
        " WHERE agents_search_keys(d.owner_id, d.event_id, d.vector) @@ %s::tsquery"
        " ORDER BY d.event_id DESC LIMIT 5000"
    )
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        cursor.execute(f"EXPLAIN {stretch}", [f"'{alice.pk}.0.london':*"])
        plan = "\n".join(row[0] for row in cursor.fetchall())
        assert "agents_search_doc_keys" in plan, plan
        assert "agents_event" not in plan, plan
        cursor.execute("RESET enable_seqscan")
        cursor.execute(
            f"SELECT count(*) FROM ({stretch}) AS found",
            [f"'{alice.pk}.0.london':* | '{alice.pk}.0.pari':*"],  # stems
        )
        hers = cursor.fetchone()[0]
        cursor.execute(
            "SELECT count(*) FROM agents_search_doc WHERE owner_id = %s"
            " AND vector @@ to_tsquery('london | paris')",
            [alice.pk],
        )
        assert hers == cursor.fetchone()[0] > 0  # all hers, none of bob's


def _spread_messages(session: Session, ids: list[int], text) -> None:
    # Messages with the given event ids (far apart: many windows of 1,024 ids).
    Event.objects.bulk_create(
        Event(
            id=pk,
            session=session,
            seq=pk,
            event_id=f"e{pk}",
            author="user",
            kind="user_message",
            timestamp=float(pk),
            data={"content": {"parts": [{"text": text(pk)}]}},
        )
        for pk in ids
    )


@pytest.mark.django_db
@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="PostgreSQL's search rows: tests/agents/test_session_search_postgresql.py",
)
def test_the_newest_messages_holding_a_word_are_read_first_and_are_the_same(alice, bob):
    # alice's 2,000 messages spread over 400,000 event ids, seven stretches of
    # 65,536 (bob's between them): a word in one of ten, one in seventy, one in 970,
    # and bob's own. Her newest first, as 0032's query gives them, unsorted.
    agent = AgentSpec.objects.create(name="helper", instruction="Help.")
    hers = create_session(user=alice, agent=agent)
    his = create_session(user=bob, agent=agent)

    def said(pk: int) -> str:
        n = pk // 200
        words = ["note"]
        words += ["budget"] if n % 10 == 0 else []
        words += ["invoice"] if n % 70 == 0 else []
        words += ["zeppelin"] if n % 970 == 0 else []
        return " ".join(words)

    _spread_messages(hers, [200 * n for n in range(1, 2001)], said)
    _spread_messages(his, [200 * n + 100 for n in range(1, 2001)], lambda _: "kayak")

    def newest(owner, word: str, limit: int) -> list[int]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT event_id FROM agents_search_newest(%s,"
                " tsvector_to_array(to_tsvector(%s)), %s)",
                [owner.pk, word, limit],
            )
            return [row[0] for row in cursor.fetchall()]

    def every(owner, word: str, limit: int) -> list[int]:  # 0032's query
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT event_id FROM agents_search_doc WHERE owner_id = %s"
                " AND vector @@ to_tsquery(%s) ORDER BY event_id DESC LIMIT %s",
                [owner.pk, f"{word}:*", limit],
            )
            return [row[0] for row in cursor.fetchall()]

    def fetched() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_stat_get_xact_tuples_fetched('agents_search_doc'::regclass)"
            )
            return cursor.fetchone()[0]

    for word in ("note", "budget", "invoice", "zeppelin", "kayak", "nothing"):
        for limit in (1, 3, 20, 57, 199, 200, 2000):
            assert newest(alice, word, limit) == every(alice, word, limit)
    assert newest(bob, "kayak", 50) == every(bob, "kayak", 50)
    # An owner past what the owner-and-event key holds (2**23): the same rows.
    zed = get_user_model().objects.create(id=2**23 + 7, username="zed")
    _spread_messages(
        create_session(user=zed, agent=agent),
        [200 * n + 50 for n in range(1, 201)],
        said,
    )
    for limit in (1, 20, 200):
        assert newest(zed, "budget", limit) == every(zed, "budget", limit) != []

    # A word in one of ten of her messages: about the newest 20 of them read, not
    # her 200 (by the indexes, as on a team's months, not this test's few rows).
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE agents_search_doc")
        cursor.execute("SET enable_seqscan = off")
    before = fetched()
    assert len(newest(alice, "budget", 20)) == 20
    assert fetched() - before < 100
    assert len(every(alice, "budget", 2000)) == 200
    with connection.cursor() as cursor:
        cursor.execute("RESET enable_seqscan")


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


@pytest.mark.django_db
@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="PostgreSQL's search keys: tests/agents/test_session_search_postgresql.py",
)
def test_a_message_of_huge_words_or_countless_words_is_stored_and_found(alice):
    # A key is the owner, the stretch and the word: past 2,047 bytes or a tsvector's
    # 1 MiB, PostgreSQL would refuse the row, and the event with it.
    agent = AgentSpec.objects.create(name="helper", instruction="Help.")
    session = create_session(user=alice, agent=agent)
    long_word = "ж" * 1020  # 2,040 bytes: a word, but past a key's length with both
    many = " ".join(f"w{n}q" for n in range(30_000))
    _said(session, 1, f"{long_word} zebra")
    _said(session, 2, f"{many} yak")

    assert _found(alice, "zebra") == [session.pk]
    assert _found(alice, "yak") == [session.pk]
    assert _found(alice, "жжжж") == [session.pk]
    assert _found(alice, "w17q") == [session.pk]
