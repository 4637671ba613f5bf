"""agents/search.py: the words of a search, and on PostgreSQL, that its query
uses the GIN index migration 0013 made (the expressions must be the same)."""

import pytest
from django.db import connection

from agents.models import Session
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
def test_the_search_uses_the_gin_index_on_postgresql():
    sql, params = search_sql(
        sessions=Session.objects.all(), owner_id=None, terms=["london"], limit=5
    )

    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("RESET enable_seqscan")

    assert "agents_event_search" in plan, plan
