"""Full-text search of sessions by their messages (a person's and the model's) and
titles, on the database's own engine: SQLite's FTS5 when embedded, PostgreSQL's
text search in production. A search starts from its user's own rows: a word the
rest of the team uses every day costs it nothing.

- SQLite: two FTS5 tables, `agents_search_text` (one row per stored user or model
  message) and `agents_search_title` (one row per titled session), kept by
  triggers on `agents_event` and `agents_session`, so storing an event sends no
  query of its own (migration 0027 makes them). A row's rowid is its session's
  owner times OWNER_SPAN plus the event's id (a title's: the session's rowid), so
  one user's rows are one rowid range, which FTS5 reads alone, newest first; a
  word's newest MAX_HITS rows count (a word in more of a user's messages than
  that counts in its newest).
- PostgreSQL: `agents_search_doc` and `agents_search_title_doc` (migration 0032),
  one narrow row per stored message and per titled session: the session's owner
  and the text's `tsvector`, kept by triggers on `agents_event` and
  `agents_session`. The titles' GIN index is on (owner, vector); the messages'
  (migration 0048) holds each word under a key of its owner's and its stretch of
  65,536 event ids (`<owner>.<epoch>.<word>`), so a word's prefix in her newest
  stretch is one range of keys holding her rows alone: `agents_search_newest`
  reads her newest stretches first, wider only while they hold fewer than
  MAX_HITS, and never a row of anyone else's.

A search is words, in any order: a session matches when each word (or a word it
begins) is in its title or in one of its messages. Sessions rank by how many of
their messages hold a word, a title counting TITLE_WEIGHT messages, then by their
latest activity: the same order on both databases, and a count, where a per-message
relevance score (FTS5's bm25, PostgreSQL's ts_rank, before 0048) cost 3 µs a row
read on a team's months of messages for a difference in order within a session's
own messages. Only letters and digits make words; everything else (quotes, `*`,
`-`, `NEAR(`, SQL) separates them and is never part of a query's syntax. English
stemming on both (`running` finds `run`); PostgreSQL also drops English stop
words (`the`), so a search of nothing but stop words finds nothing there.

Each session found carries a snippet of its newest matching message, the words
found marked (`SnippetPart.match`): FTS5's `snippet()`, PostgreSQL's
`ts_headline()`, run on that one message per session of the page only. The
snippet is text, never markup: a client shows it as text.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.models import QuerySet

from agents.models import Session

MAX_TERMS = 8
MAX_HITS = 1000  # a word's newest rows of one user's, per table, counted
OWNER_SPAN = 2**36  # SQLite rowids: owner * OWNER_SPAN + id (migration 0027)
SNIPPET_WORDS = 16
# Where a snippet's found words start and end: private-use characters, split off
# below, so nothing in a message can pass for markup.
MARK_START, MARK_END = "\ue000", "\ue001"
MAX_TERM_CHARS = 64
TITLE_WEIGHT = 5
# Events whose text parts a person reads in the timeline (agents.events.wire's
# kinds): a user's message, and the model's words, also beside a call or a handover.
MESSAGE_KINDS = ("user_message", "text", "function_call", "transfer", "escalation")
_WORD = re.compile(r"[^\W_]+")

SQLITE_TEXT = "agents_search_text"
SQLITE_TITLE = "agents_search_title"
PG_DOCS = "agents_search_doc"  # migration 0032: messages
PG_TITLES = "agents_search_title_doc"  # and titles
# Migration 0048: an owner's newest `limit` messages holding every lexeme given (each
# as a prefix), read from her newest stretches of event ids first, widened only
# while they hold fewer; each with its session and event.
PG_NEWEST = "agents_search_newest"


def search_terms(text: str) -> list[str]:
    """The words of a search, lowercased, each once, at most MAX_TERMS."""
    words = (word.lower()[:MAX_TERM_CHARS] for word in _WORD.findall(text))
    return list(dict.fromkeys(words))[:MAX_TERMS]


@dataclass(frozen=True)
class SnippetPart:
    text: str
    match: bool


@dataclass(frozen=True)
class SearchHit:
    session_id: str
    snippet: list[SnippetPart] | None  # None: found by its title alone


def search_sessions(
    *,
    sessions: QuerySet[Session],
    owner_id: int | None,
    terms: Sequence[str],
    limit: int,
    offset: int = 0,
) -> list[SearchHit]:
    """The sessions of `sessions` (all `owner_id`'s) that hold every term, best
    match first, each with a snippet; two queries."""
    ranked = _ranked(
        sessions=sessions, owner_id=owner_id, terms=terms, limit=limit, offset=offset
    )
    if not ranked:
        return []
    rows = [row for _, row in ranked if row]
    if connection.vendor == "postgresql":
        snippets = _postgresql_snippets(terms, rows)
    else:
        snippets = _sqlite_snippets(terms, rows)
    return [SearchHit(pk, snippets.get(pk)) for pk, _ in ranked]


def ranked_session_ids(
    *,
    sessions: QuerySet[Session],
    owner_id: int | None,
    terms: Sequence[str],
    limit: int,
    offset: int = 0,
) -> list[str]:
    """The ids of `sessions` that hold every term, best match first; one query."""
    ranked = _ranked(
        sessions=sessions, owner_id=owner_id, terms=terms, limit=limit, offset=offset
    )
    return [pk for pk, _ in ranked]


def _ranked(
    *,
    sessions: QuerySet[Session],
    owner_id: int | None,
    terms: Sequence[str],
    limit: int,
    offset: int = 0,
) -> list[tuple[str, int | None]]:
    # Each session found, and its newest matching message's row (SQLite: its
    # rowid; PostgreSQL: its event's id); None when only its title matched.
    if not terms:
        return []
    sql, params = search_sql(
        sessions=sessions, owner_id=owner_id, terms=terms, limit=limit, offset=offset
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(row[0], row[1]) for row in cursor.fetchall()]


def search_sql(
    *,
    sessions: QuerySet[Session],
    owner_id: int | None,
    terms: Sequence[str],
    limit: int,
    offset: int = 0,
) -> tuple[str, list]:
    """The SQL of ranked_session_ids() for this database, and its parameters."""
    mine, mine_params = (
        sessions.order_by().values("id", "title", "updated_at").query.sql_with_params()
    )
    if connection.vendor == "postgresql":
        sql, params = _postgresql(terms, owner_id)
    else:
        sql, params = _sqlite(terms, owner_id)
    return (
        f"WITH mine AS ({mine}), {sql} LIMIT %s OFFSET %s",
        [*mine_params, *params, limit, offset],
    )


def owner_rowids(owner_id: int | None) -> tuple[int, int]:
    """SQLite: the first and last rowid one owner's search rows may have."""
    first = (owner_id or 0) * OWNER_SPAN
    return first, first + OWNER_SPAN - 1


def _sqlite(terms: Sequence[str], owner_id: int | None) -> tuple[str, list]:
    # A message holding a term counts 1, a title TITLE_WEIGHT; a quoted term is a
    # string, never syntax. The rowid range keeps FTS5 to the owner's rows; the
    # newest first.
    first, last = owner_rowids(owner_id)
    hits, params = [], []
    for number, term in enumerate(terms):
        for table, weight in ((SQLITE_TEXT, 1), (SQLITE_TITLE, TITLE_WEIGHT)):
            row = "rowid" if table == SQLITE_TEXT else "NULL"
            hits.append(
                f"SELECT * FROM (SELECT session_id, {number} AS term, {row} AS row,"
                f" {weight} AS score FROM {table}"
                f" WHERE {table} MATCH %s AND rowid BETWEEN %s AND %s"
                " ORDER BY rowid DESC LIMIT %s)"
            )
            params.extend([f'"{term}"*', first, last, MAX_HITS])
    # Hits are summed by session before they meet `mine` (a session's row looked
    # up once, not once a hit), each term a bit of `found`.
    sql = (
        f"hits AS ({' UNION ALL '.join(hits)}) "
        "SELECT h.session_id, h.row FROM (SELECT session_id, max(row) AS row,"
        " sum(score) AS score, sum(DISTINCT 1 << term) AS found"
        " FROM hits GROUP BY session_id) h JOIN mine m ON m.id = h.session_id"
        " WHERE h.found = %s ORDER BY h.score DESC, m.updated_at DESC, h.session_id"
    )
    return sql, [*params, (1 << len(terms)) - 1]


def _postgresql(terms: Sequence[str], owner_id: int | None) -> tuple[str, list]:
    # A stop word makes no query and no term. Per term, the owner's newest MAX_HITS
    # messages holding it (PG_NEWEST: her own keys, newest epoch first; each a
    # point) and MAX_HITS of her titles (TITLE_WEIGHT each). The owner is cast to
    # the column's type: compared as another integer type, it is no key of the
    # titles' GIN index. Hits are summed by session before they meet `mine`, each
    # term a bit of `found` (a hash, where count(DISTINCT) sorted them all).
    owner = owner_id or 0
    sql = (
        "terms AS (SELECT n, q, lexemes FROM (SELECT n,"
        " to_tsquery('english', w || ':*') AS q,"
        " tsvector_to_array(to_tsvector('english', w)) AS lexemes"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS t(w, n)) AS words"
        " WHERE numnode(q) > 0 AND cardinality(lexemes) > 0), "
        "hits AS ("
        "SELECT d.session_id, t.n, d.event_id, 1 AS score"
        f" FROM terms t CROSS JOIN LATERAL {PG_NEWEST}(%s::integer, t.lexemes,"
        " %s::integer) d"
        " UNION ALL "
        f"SELECT d.session_id, t.n, NULL, {TITLE_WEIGHT}"
        " FROM terms t CROSS JOIN LATERAL (SELECT session_id"
        f" FROM {PG_TITLES} WHERE owner_id = %s::integer AND vector @@ t.q"
        " LIMIT %s) d) "
        "SELECT h.session_id, h.row FROM (SELECT session_id, max(event_id) AS row,"
        " sum(score) AS score, bit_or(1 << n::integer) AS found"
        " FROM hits GROUP BY session_id) h JOIN mine m ON m.id = h.session_id"
        " WHERE h.found = (SELECT bit_or(1 << n::integer) FROM terms)"
        " ORDER BY h.score DESC, m.updated_at DESC, h.session_id"
    )
    return sql, [list(terms), owner, MAX_HITS, owner, MAX_HITS]


def _sqlite_snippets(
    terms: Sequence[str], rowids: Sequence[int]
) -> dict[str, list[SnippetPart]]:
    # The messages by rowid alone: a MATCH would merge a prefix's doclists again,
    # every user's. The words are marked here, by the search's own rule.
    if not rowids:
        return {}
    # As bytes: a row stored before the input rules may hold a lone surrogate,
    # which SQLite keeps as bytes no UTF-8 decoder takes; shown as U+FFFD.
    marks = ", ".join(["%s"] * len(rowids))
    sql = (
        f"SELECT session_id, CAST(body AS BLOB) FROM {SQLITE_TEXT}"
        f" WHERE rowid IN ({marks})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, list(rowids))
        found = {
            pk: snippet_of((body or b"").decode(errors="replace"), terms)
            for pk, body in cursor.fetchall()
        }
    return {pk: parts for pk, parts in found.items() if parts}


def snippet_of(text: str, terms: Sequence[str]) -> list[SnippetPart]:
    """SNIPPET_WORDS words of `text` around its first word a term begins (else its
    start), those words marked; `…` where it was cut."""
    words = list(_WORD.finditer(text))
    if not words:
        return []
    found = [
        n for n, w in enumerate(words) if w.group().lower().startswith(tuple(terms))
    ]
    start = max(0, (found[0] if found else 0) - SNIPPET_WORDS // 3)
    end = min(len(words), start + SNIPPET_WORDS)
    parts = [SnippetPart("…", False)] if start else []
    at = words[start].start() if start else 0
    for n in range(start, end):
        word = words[n]
        if n in found:
            parts.append(SnippetPart(text[at : word.start()], False))
            parts.append(SnippetPart(word.group(), True))
            at = word.end()
    if end < len(words):
        parts.append(SnippetPart(text[at : words[end - 1].end()] + "…", False))
    else:
        parts.append(SnippetPart(text[at:], False))
    return _joined([part for part in parts if part.text])


def _joined(parts: list[SnippetPart]) -> list[SnippetPart]:
    merged: list[SnippetPart] = []
    for part in parts:
        if merged and not part.match and not merged[-1].match:
            merged[-1] = SnippetPart(merged[-1].text + part.text, False)
        else:
            merged.append(part)
    return merged


def _postgresql_snippets(
    terms: Sequence[str], event_ids: Sequence[int]
) -> dict[str, list[SnippetPart]]:
    # The messages by id alone, each marked by ts_headline() with the search's words.
    if not event_ids:
        return {}
    text = (
        "array_to_string(ARRAY(SELECT jsonb_array_elements_text("
        "jsonb_path_query_array(e.data, '$.content.parts[*] ? "
        "(!(@.thought == true)).text'::jsonpath))), E'\\n')"
    )
    options = (
        f"StartSel={MARK_START}, StopSel={MARK_END}, "
        f"MaxWords={SNIPPET_WORDS}, MinWords={SNIPPET_WORDS // 2}, ShortWord=2"
    )
    sql = (
        f"SELECT e.session_id, ts_headline('english', {text},"
        " to_tsquery('english', %s), %s) FROM agents_event e WHERE e.id = ANY(%s)"
    )
    query = " | ".join(f"{term}:*" for term in terms)
    with connection.cursor() as cursor:
        cursor.execute(sql, [query, options, list(event_ids)])
        return {pk: snippet_parts(text) for pk, text in cursor.fetchall() if text}


def snippet_parts(text: str) -> list[SnippetPart]:
    """A marked snippet as text and found words; the marks themselves dropped."""
    parts = []
    for number, piece in enumerate(re.split(f"[{MARK_START}{MARK_END}]", text)):
        if piece:
            parts.append(SnippetPart(piece, match=number % 2 == 1))
    return parts
