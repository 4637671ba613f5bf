"""Full-text search of sessions by their messages (a person's and the model's) and
titles, on the database's own engine: SQLite's FTS5 when embedded, PostgreSQL's
text search in production.

- SQLite: two FTS5 tables, `agents_search_text` (one row per stored user or model
  message, its rowid the Event's id) and `agents_search_title` (one row per titled
  session), kept by triggers on `agents_event` and `agents_session`, so storing an
  event sends no query of its own (migration 0013 creates them).
- PostgreSQL: GIN indexes over `to_tsvector('english', ...)` of a message's text
  parts (thoughts left out) and of a session's title, which PostgreSQL keeps
  itself; the expressions below are the indexes' own, so the planner uses them.

A search is words, in any order: a session matches when each word (or a word it
begins) is in its title or in one of its messages, and sessions rank by how well
they match, a title counting TITLE_WEIGHT times a message. Only letters and digits
make words; everything else (quotes, `*`, `-`, `NEAR(`, SQL) separates them and is
never part of a query's syntax. English stemming on both (`running` finds `run`);
PostgreSQL also drops English stop words (`the`), so a search of nothing but stop
words finds nothing there.
"""

import re
from collections.abc import Sequence

from django.db import connection
from django.db.models import QuerySet

from agents.models import Session

MAX_TERMS = 8
MAX_TERM_CHARS = 64
TITLE_WEIGHT = 5
# Events whose text parts a person reads in the timeline (agents.events.wire's
# kinds): a user's message, and the model's words, also beside a call or a handover.
MESSAGE_KINDS = ("user_message", "text", "function_call", "transfer", "escalation")
_WORD = re.compile(r"[^\W_]+")

SQLITE_TEXT = "agents_search_text"
SQLITE_TITLE = "agents_search_title"
# The indexed expressions of migration 0013's PostgreSQL indexes, exactly.
PG_MESSAGE_VECTOR = (
    "to_tsvector('english'::regconfig, jsonb_path_query_array(e.data, "
    "'$.content.parts[*] ? (!(@.thought == true)).text'::jsonpath))"
)
PG_TITLE_VECTOR = "to_tsvector('english'::regconfig, (m.title)::text)"


def search_terms(text: str) -> list[str]:
    """The words of a search, lowercased, each once, at most MAX_TERMS."""
    words = (word.lower()[:MAX_TERM_CHARS] for word in _WORD.findall(text))
    return list(dict.fromkeys(words))[:MAX_TERMS]


def ranked_session_ids(
    *, sessions: QuerySet[Session], terms: Sequence[str], limit: int, offset: int = 0
) -> list[str]:
    """The ids of `sessions` that hold every term, best match first; one query."""
    if not terms:
        return []
    sql, params = search_sql(sessions=sessions, terms=terms, limit=limit, offset=offset)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def search_sql(
    *, sessions: QuerySet[Session], terms: Sequence[str], limit: int, offset: int = 0
) -> tuple[str, list]:
    """The SQL of ranked_session_ids() for this database, and its parameters."""
    mine, mine_params = (
        sessions.order_by().values("id", "title", "updated_at").query.sql_with_params()
    )
    if connection.vendor == "postgresql":
        sql, params = _postgresql(terms)
    else:
        sql, params = _sqlite(terms)
    return (
        f"WITH mine AS ({mine}), {sql} LIMIT %s OFFSET %s",
        [*mine_params, *params, limit, offset],
    )


def _sqlite(terms: Sequence[str]) -> tuple[str, list]:
    # bm25() is lower for a better match; a quoted term is a string, never syntax.
    hits, params = [], []
    for number, term in enumerate(terms):
        match = f'"{term}"*'
        for table, weight in ((SQLITE_TEXT, 1), (SQLITE_TITLE, TITLE_WEIGHT)):
            hits.append(
                f"SELECT session_id, {number} AS term, {weight} * bm25({table}) AS score"
                f" FROM {table} WHERE {table} MATCH %s"
                " AND session_id IN (SELECT id FROM mine)"
            )
            params.append(match)
    sql = (
        f"hits AS ({' UNION ALL '.join(hits)}) "
        "SELECT h.session_id FROM hits h JOIN mine m ON m.id = h.session_id "
        "GROUP BY h.session_id, m.updated_at HAVING count(DISTINCT h.term) = %s "
        "ORDER BY sum(h.score), m.updated_at DESC, h.session_id"
    )
    return sql, [*params, len(terms)]


def _postgresql(terms: Sequence[str]) -> tuple[str, list]:
    # ts_rank() is higher for a better match; a stop word makes no query and no term.
    sql = (
        "terms AS (SELECT n, q FROM (SELECT n, to_tsquery('english', w || ':*') AS q"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS t(w, n)) AS words"
        " WHERE numnode(q) > 0), "
        "hits AS ("
        f"SELECT e.session_id, t.n, ts_rank({PG_MESSAGE_VECTOR}, t.q) AS score"
        f" FROM agents_event e JOIN terms t ON {PG_MESSAGE_VECTOR} @@ t.q"
        f" WHERE e.kind IN {MESSAGE_KINDS!r}"
        " AND e.session_id IN (SELECT id FROM mine)"
        " UNION ALL "
        f"SELECT m.id, t.n, {TITLE_WEIGHT} * ts_rank({PG_TITLE_VECTOR}, t.q)"
        f" FROM mine m JOIN terms t ON {PG_TITLE_VECTOR} @@ t.q) "
        "SELECT h.session_id FROM hits h JOIN mine m ON m.id = h.session_id "
        "GROUP BY h.session_id, m.updated_at "
        "HAVING count(DISTINCT h.n) = (SELECT count(*) FROM terms) "
        "ORDER BY sum(h.score) DESC, m.updated_at DESC, h.session_id"
    )
    return sql, [list(terms)]
