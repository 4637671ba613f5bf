"""DjangoMemoryService: a user's past sessions as MemoryEntry rows, searchable by text.

Memory is scoped as ADK scopes it, by (app, user): a search only ever reads the
rows of the user it is asked for. Each event with text becomes one entry, so a
search returns excerpts (the matching messages), best first, at most
TOOLCRIB_MEMORY_MAX_RESULTS of them.

Ranking, as ADK's in-memory service ranks: by how many distinct query words an
entry contains (stop words left out of the query), ties in the order the entries
were stored. A query word is in an entry when it is one of the entry's words, or,
for a word with letters beyond ASCII, anywhere in its text: Chinese and Japanese
are written without spaces, so 太郎 is found in 私の名前は太郎です. A Latin word
inside such text (Python in 私はPythonを使う) is a word of its own; part of a Latin
word (thon) is never a match. On PostgreSQL a word also matches the entry's other
forms of it, by full-text search (configuration TOOLCRIB_MEMORY_SEARCH_CONFIG:
"running" finds "run").
"""

import itertools
import re
import unicodedata
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import reduce
from operator import or_
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connections, transaction
from django.db.models import BooleanField, Case, Q, QuerySet, Value, When
from google.adk.events import Event as AdkEvent
from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry as AdkMemoryEntry
from google.adk.platform import time as platform_time
from google.adk.sessions import Session as AdkSession
from google.genai import types

from agents.inputs import replace_surrogates
from agents.models import MemoryEntry

NO_SESSION = ""
MAX_QUERY_WORDS = 32
# On PostgreSQL, each row's flag per query word: a form of the word is in it.
STEM = "stem_match_"
_WORD = re.compile(r"\w+")
STOP_WORDS = frozenset(
    """
    a about an and any are as at be but by can do for from had has have how i if in
    into is it its me my no not of on or our so that the their them then there these
    they this to was we were what when where which who why will with you your
    """.split()
)


class DjangoMemoryService(BaseMemoryService):
    """ADK's memory service on the Django ORM."""

    async def add_session_to_memory(self, session: AdkSession) -> None:
        """Remember the session's events with text, replacing what it added before."""
        await sync_to_async(add_session, thread_sensitive=True)(session=session)

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[AdkEvent],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Remember these events too; events already remembered are skipped."""
        await sync_to_async(add_events, thread_sensitive=True)(
            app_name=app_name,
            user_id=user_id,
            events=events,
            session_id=session_id,
            custom_metadata=custom_metadata,
        )

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[AdkMemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Remember explicit entries, outside any session."""
        await sync_to_async(add_memories, thread_sensitive=True)(
            app_name=app_name,
            user_id=user_id,
            memories=memories,
            custom_metadata=custom_metadata,
        )

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """The user's own remembered excerpts that best match the query."""
        memories = await sync_to_async(search, thread_sensitive=True)(
            app_name=app_name, user_id=user_id, query=query
        )
        return SearchMemoryResponse(memories=memories)

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        """Forget one entry; adding its session again does not bring it back."""
        await sync_to_async(delete_memory, thread_sensitive=True)(
            app_name=app_name, user_id=user_id, memory_id=memory_id
        )


def add_session(*, session: AdkSession) -> int:
    """See DjangoMemoryService.add_session_to_memory(); returns the entries kept."""
    scope = {"app_name": session.app_name, "user_id": session.user_id}
    with transaction.atomic():
        forgotten = _forgotten_ids(scope)
        MemoryEntry.objects.filter(
            **scope, session_key=session.id, is_deleted=False
        ).delete()
        rows = _rows_for(scope, session.id, session.events, forgotten, {})
        MemoryEntry.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def add_events(
    *,
    app_name: str,
    user_id: str,
    events: Iterable[AdkEvent],
    session_id: str | None,
    custom_metadata: Mapping[str, object] | None,
) -> int:
    """See DjangoMemoryService.add_events_to_memory()."""
    scope = {"app_name": app_name, "user_id": user_id}
    with transaction.atomic():
        rows = _rows_for(
            scope,
            session_id or NO_SESSION,
            events,
            _forgotten_ids(scope),
            dict(custom_metadata or {}),
        )
        MemoryEntry.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def add_memories(
    *,
    app_name: str,
    user_id: str,
    memories: Iterable[AdkMemoryEntry],
    custom_metadata: Mapping[str, object] | None,
) -> None:
    """See DjangoMemoryService.add_memory()."""
    rows = [
        _row(
            {"app_name": app_name, "user_id": user_id},
            session_key=NO_SESSION,
            event_id=memory.id or str(uuid.uuid4()),
            author=memory.author or "",
            timestamp=platform_time.get_time(),
            content=memory.content,
            metadata={**dict(custom_metadata or {}), **memory.custom_metadata},
        )
        for memory in memories
    ]
    MemoryEntry.objects.bulk_create([r for r in rows if r.text], ignore_conflicts=True)


def search(*, app_name: str, user_id: str, query: str) -> list[AdkMemoryEntry]:
    """See DjangoMemoryService.search_memory()."""
    words = query_words(query)
    if not words:
        return []
    rows = MemoryEntry.objects.filter(
        app_name=app_name, user_id=user_id, is_deleted=False
    )
    contains = reduce(or_, [Q(text__contains=word) for word in words])
    if connections[rows.db].vendor == "postgresql":
        rows = _with_stem_matches(rows, words, contains)
    else:
        rows = rows.filter(contains)
    scored = []
    for row in rows.order_by("pk").iterator():
        score = _score(row, words)
        if score:
            scored.append((score, row))
    # A stable sort on the score alone: ties keep the order they were stored in.
    scored.sort(key=lambda item: -item[0])
    limit = settings.TOOLCRIB_MEMORY_MAX_RESULTS
    return [memory_entry(row) for _, row in scored[:limit]]


def delete_memory(*, app_name: str, user_id: str, memory_id: str | None) -> None:
    """See DjangoMemoryService.delete_memory()."""
    if not memory_id:
        return
    MemoryEntry.objects.filter(
        app_name=app_name, user_id=user_id, event_id=memory_id
    ).update(is_deleted=True)


def memory_entry(row: MemoryEntry) -> AdkMemoryEntry:
    """ADK's view of a stored entry; custom_metadata names the session it came from."""
    return AdkMemoryEntry(
        id=row.event_id,
        author=row.author or None,
        timestamp=iso_timestamp(row.timestamp),
        content=types.Content.model_validate(row.content),
        custom_metadata={**row.custom_metadata, "session_id": row.session_key},
    )


def iso_timestamp(timestamp: float) -> str:
    """ADK's own format for memory timestamps (memory/_utils.format_timestamp)."""
    return datetime.fromtimestamp(timestamp).isoformat()


def searchable_text(text: str) -> str:
    """Text as it is searched: NFC-normalized and lowercased."""
    return unicodedata.normalize("NFC", text).lower()


def query_words(query: str) -> list[str]:
    """The distinct words of a query, stop words left out (unless that is all)."""
    words = list(dict.fromkeys(_WORD.findall(searchable_text(query))))
    kept = [word for word in words if word not in STOP_WORDS]
    return (kept or words)[:MAX_QUERY_WORDS]


def entry_words(text: str) -> set[str]:
    """The words of a searchable text, and each script's run within a word.

    私はpythonを使う is one word to a regular expression: its runs 私は, python
    and を使う are words too, so a Latin word inside unspaced text is found.
    """
    words = set(_WORD.findall(text))
    for word in [w for w in words if not w.isascii()]:
        words.update("".join(run) for _, run in itertools.groupby(word, _is_latin))
    return words


def _is_latin(char: str) -> bool:
    if char.isascii():
        return char.isalnum() or char == "_"
    return unicodedata.name(char, "").startswith("LATIN")


def _score(row: MemoryEntry, words: Sequence[str]) -> int:
    """How many query words the entry contains (see the module's docstring)."""
    found = entry_words(row.text)
    return sum(
        1
        for index, word in enumerate(words)
        if word in found
        or (not word.isascii() and word in row.text)
        or getattr(row, f"{STEM}{index}", False)
    )


def _with_stem_matches(
    rows: QuerySet[MemoryEntry], words: Sequence[str], contains: Q
) -> QuerySet[MemoryEntry]:
    """Rows holding a word or a form of one, each flagged per word by its forms."""
    config = settings.TOOLCRIB_MEMORY_SEARCH_CONFIG
    queries = [SearchQuery(word, search_type="plain", config=config) for word in words]
    rows = rows.annotate(match=SearchVector("text", config=config))
    flags = {
        f"{STEM}{index}": Case(
            When(match=query, then=Value(True)),
            default=Value(False),
            output_field=BooleanField(),
        )
        for index, query in enumerate(queries)
    }
    return rows.filter(contains | Q(match=reduce(or_, queries))).annotate(**flags)


def _forgotten_ids(scope: Mapping[str, str]) -> set[str]:
    rows = MemoryEntry.objects.filter(**scope, is_deleted=True)
    return set(rows.values_list("event_id", flat=True))


def _rows_for(
    scope: Mapping[str, str],
    session_key: str,
    events: Iterable[AdkEvent],
    forgotten: set[str],
    metadata: dict[str, Any],
) -> list[MemoryEntry]:
    rows = [
        _row(
            scope,
            session_key=session_key,
            event_id=event.id,
            author=event.author,
            timestamp=event.timestamp,
            content=event.content,
            metadata=metadata,
        )
        for event in events
        if event.content and event.id not in forgotten
    ]
    return [row for row in rows if row.text]


def _row(
    scope: Mapping[str, str],
    *,
    session_key: str,
    event_id: str,
    author: str,
    timestamp: float,
    content: types.Content,
    metadata: dict[str, Any],
) -> MemoryEntry:
    # A text stored before the input rule may hold a lone surrogate: no UTF-8 column
    # takes one, so it is remembered as U+FFFD (agents.inputs).
    texts = [
        replace_surrogates(p.text)
        for p in content.parts or []
        if p.text and not p.thought
    ]
    return MemoryEntry(
        **scope,
        session_key=session_key,
        event_id=event_id,
        author=author,
        timestamp=timestamp,
        # Only the words are remembered: calls, results and files stay in the session.
        content=types.Content(
            role=content.role, parts=[types.Part(text=t) for t in texts]
        ).model_dump(mode="json", exclude_none=True),
        text=searchable_text(" ".join(texts)),
        custom_metadata=metadata,
    )
