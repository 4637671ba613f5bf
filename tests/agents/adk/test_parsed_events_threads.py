"""agents.adk.parsed_events under a worker's threads: the process's LRU of parsed
events, filled and read by turns at once, hands each its own row's event (never
another's) and keeps to its bound."""

from google.adk.events import Event as AdkEvent

from agents.adk.parsed_events import ParsedEvents
from tests.threads import at_once

SIZE = 16
ROWS = 64  # each thread's, more than the LRU keeps


def test_turns_keeping_and_reading_events_at_once_get_their_own_rows_events():
    kept = ParsedEvents(SIZE)

    def turn(index: int) -> list[str]:
        wrong = []
        for n in range(ROWS):
            pk = index * ROWS + n
            event = AdkEvent(author="user", invocation_id=f"row{pk}")
            kept.put(pk, event)
            found = kept.get_many([(pk, event.id), (pk - 1, "no such event id")])
            wrong += [
                f"row {pk} got row {other}'s event"
                for other, event_ in found.items()
                if event_.invocation_id != f"row{other}" or other != pk
            ]
        return wrong

    wrong = at_once(turn)

    assert [found for found in wrong if found] == []
    assert len(kept._events) == SIZE
