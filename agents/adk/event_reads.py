"""A session's stored ADK events, read back: every one, the newest few, or a
history window in whole turns (agents.adk.history), each parsed once a process
(agents.adk.parsed_events).
"""

from functools import lru_cache

from django.db.models import Max, QuerySet, Subquery
from django.db.models.functions import Coalesce
from google.adk.events import Event as AdkEvent
from google.adk.sessions.base_session_service import GetSessionConfig

from agents.adk.history import HistoryWindow
from agents.adk.parsed_events import PARSED
from agents.models import Event, Session
from project.patches.prepared import Param, Prepared


def read_events(*, row: Session, config: GetSessionConfig) -> list[AdkEvent]:
    if config.num_recent_events == 0:
        return []
    # Events past the row's last_seq were committed after the row was read; leaving
    # them out keeps the events consistent with the revision handed out as marker.
    rows = Event.objects.filter(session=row, is_adk=True, seq__lte=row.last_seq)
    if config.after_timestamp is not None:
        rows = _after_last_older(rows, after_timestamp=config.after_timestamp)
    if config.num_recent_events is None:
        keys = list(rows.order_by("seq").values_list(*_WINDOWED))
    elif isinstance(config, HistoryWindow):
        newest = None
        if config.after_timestamp is None and config.num_recent_events:
            newest = _newest(row, limit=config.num_recent_events)
        keys = _window(rows, config, newest=newest)
    else:
        newest = rows.order_by("-seq")[: config.num_recent_events]
        keys = list(newest.values_list(*_WINDOWED))[::-1]
    return _parsed(rows=rows, keys=keys)


def _parsed(*, rows: QuerySet[Event], keys: list[tuple]) -> list[AdkEvent]:
    """The events of `keys` (_WINDOWED tuples, in order), parsed once per process:
    the data of those not kept parsed (agents.adk.parsed_events) in one more query."""
    found = PARSED.get_many((key[-2], key[-1]) for key in keys)
    missing = [key[0] for key in keys if key[-2] not in found]
    if missing:
        # One range (a window is contiguous but for the invocations it resumes).
        span = rows.filter(seq__gte=missing[0], seq__lte=missing[-1]).order_by()
        for pk, data in span.values_list("pk", "data"):
            if pk not in found:
                found[pk] = event = AdkEvent.model_validate(data)
                PARSED.put(pk, event)
    return [found[key[-2]] for key in keys]


def _window(
    rows: QuerySet[Event], window: HistoryWindow, *, newest: list[tuple] | None
) -> list[tuple]:
    """The newest events, in whole turns, and those of the invocations the turn
    resumes (agents.adk.history), as _WINDOWED tuples: one query with the window
    as its LIMIT, and one more when the newest turn is longer than the window or a
    turn resumes an invocation. `newest`: the first query's rows, if read already
    (_newest), newest first."""
    limit = window.num_recent_events or 0
    if newest is None:
        newest = list(rows.order_by("-seq").values_list(*_WINDOWED)[:limit])
    newest = newest[::-1]
    if not newest:
        return []
    opening = next((i for i, row in enumerate(newest) if _opens(*row[1:3])), None)
    if len(newest) < limit:
        kept = newest  # From the session's first event: every event there is.
    elif opening is not None:
        kept = newest[opening:]
    else:
        kept = _turn_before(rows, seq=newest[0][0]) + newest
    if window.resumes:
        older = rows.filter(seq__lt=kept[0][0], invocation_id__in=window.resumes)
        kept = list(older.order_by("seq").values_list(*_WINDOWED)) + kept
    return kept


# What a read selects of each event: the window's fields, and the row and event
# ids the parsed events are kept by; the data only for events not kept parsed.
_WINDOWED = ("seq", "author", "kind", "pk", "event_id")


def _newest(row: Session, *, limit: int) -> list[tuple]:
    """The session's newest `limit` ADK events up to its last_seq, newest first, as
    _WINDOWED tuples: a window's first query, compiled once a process per limit."""
    return _newest_query(limit).fetch(session=row.pk, last_seq=row.last_seq)


@lru_cache(maxsize=64)
def _newest_query(limit: int) -> Prepared:
    field = Event._meta.get_field
    rows = Event.objects.filter(
        session=Param("session", field("session")),
        is_adk=True,
        seq__lte=Param("last_seq", field("seq")),
    )
    return Prepared(rows.order_by("-seq").values_list(*_WINDOWED)[:limit])


def _opens(author: str, kind: str) -> bool:
    """Whether a stored ADK event opens a turn: the user's, answering no call."""
    return author == "user" and kind != "function_response"


def _turn_before(rows: QuerySet[Event], *, seq: int) -> list[tuple]:
    """The events before `seq` from the start of its turn, in one query."""
    opening = (
        rows.filter(seq__lt=seq, author="user")
        .exclude(kind="function_response")
        .order_by("-seq")
        .values("seq")[:1]
    )
    earlier = rows.filter(seq__lt=seq, seq__gte=Coalesce(Subquery(opening), 0))
    return list(earlier.order_by("seq").values_list(*_WINDOWED))


def _after_last_older(
    rows: QuerySet[Event], *, after_timestamp: float
) -> QuerySet[Event]:
    # InMemory keeps what follows the newest event older than the cutoff, rather
    # than every event at or after it; the two differ when timestamps go backwards.
    older = rows.filter(timestamp__lt=after_timestamp)
    cutoff = older.aggregate(last=Max("seq"))["last"]
    return rows if cutoff is None else rows.filter(seq__gt=cutoff)
