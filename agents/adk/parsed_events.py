"""Stored ADK events already parsed, kept per process, so a turn does not parse its
session's history again every turn.

A stored event never changes (its row is written once), and ADK copies an event
before it changes one of a session's (its flows call `model_copy(deep=True)`
first), so one parsed object can serve every later read of the same row in this
process. Entries are keyed by the stored row's primary key (never reused once
committed) and checked against the event's own id; they hold the event as stored
(redacted, parsed from the stored data, never the object a turn held in memory),
and are dropped least recently used first past TOOLCRIB_PARSED_EVENTS (0: keep
none). A parsed event takes about 5 KiB, so the bound is what the process's memory
grows by before it levels off: 10,000 took about 50 MiB and 2,500 turns to fill,
which looked like a leak (issue 43; bench/memory_growth.py).
"""

import threading
from collections import OrderedDict
from collections.abc import Iterable

from django.conf import settings
from google.adk.events import Event as AdkEvent


class ParsedEvents:
    """A bounded, thread-safe LRU of parsed stored events."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._events: OrderedDict[int, AdkEvent] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, rows: Iterable[tuple[int, str]]) -> dict[int, AdkEvent]:
        """The kept events among `rows` ((row pk, event id) pairs), by row pk."""
        found = {}
        with self._lock:
            for pk, event_id in rows:
                event = self._events.get(pk)
                if event is not None and event.id == event_id:
                    self._events.move_to_end(pk)
                    found[pk] = event
        return found

    def put(self, pk: int, event: AdkEvent) -> None:
        """Keep the parsed event of the stored row `pk`."""
        if self.size <= 0:
            return
        with self._lock:
            self._events[pk] = event
            self._events.move_to_end(pk)
            while len(self._events) > self.size:
                self._events.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._events.clear()


PARSED = ParsedEvents(settings.TOOLCRIB_PARSED_EVENTS)
