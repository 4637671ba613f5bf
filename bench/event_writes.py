"""Benchmark: storing one event, in one statement and in a transaction.

The session service stores an event under its session's next seq
(agents/adk/event_rows.py): on PostgreSQL, outside a transaction, the UPDATE that
takes the seq and the INSERT are one statement; elsewhere, and for an event that
changes state, the two run in a transaction. This writes --events events each way,
taking turns in rounds, on one new session of the configured database (its
DATABASE_URL, migrated), and prints per event the wall time and the CPU time of the
writing thread, median of the rounds. The session and its events are deleted at the
end.

    DATABASE_URL=postgres://... .venv/bin/python -m bench.event_writes [--events 400]
        [--rounds 5]
"""

import bench.django_setup  # noqa: F401 - before any Django import

# isort: split

import argparse
import statistics
import time
import uuid
from collections.abc import Callable

from asgiref.sync import async_to_sync
from django.db import connection, transaction
from google.adk.events import Event as AdkEvent
from google.adk.sessions import Session as AdkSession
from google.genai import types

from agents.adk import event_rows, event_writes, sessions
from agents.models import Session

APP = "bench_event_writes"


def one_event(number: int) -> AdkEvent:
    """A model's text event, as a turn stores four to six of."""
    text = f"The weather in city {number} is sunny, 21 degrees."
    return AdkEvent(
        invocation_id="bench",
        author="bench_agent",
        content=types.Content(role="model", parts=[types.Part(text=text)]),
    )


def in_one_statement(session: AdkSession, event: AdkEvent) -> tuple[int, int]:
    written = event_writes.write_event(session=session, event=event)
    assert written is not None
    return written


def in_a_transaction(session: AdkSession, event: AdkEvent) -> tuple[int, int]:
    """event_rows.store()'s other way: the UPDATE and the INSERT in a transaction."""
    row = event_writes._event_row(event=event, sender_id=None)
    with transaction.atomic():
        taken = event_rows.advance(*event_writes._advance_statement(session, event))
        assert taken is not None
        row.session_id, row.seq, revision = taken
        event_rows.insert(row)
    return row.seq, revision


def timed(
    write: Callable[[AdkSession, AdkEvent], tuple[int, int]],
    session: AdkSession,
    events: int,
) -> tuple[float, float]:
    """(wall ms, thread CPU ms) per event of `events` writes."""
    batch = [one_event(number) for number in range(events)]
    wall, cpu = time.perf_counter(), time.thread_time()
    for event in batch:
        _, revision = write(session, event)
        session._storage_update_marker = str(revision)
    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
    return wall / events * 1000, cpu / events * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    service = sessions.DjangoSessionService()
    session = async_to_sync(service.create_session)(
        app_name=APP, user_id="bench", session_id=uuid.uuid4().hex
    )
    ways = {"one statement": in_one_statement, "transaction": in_a_transaction}
    if not event_rows.one_statement():
        print(f"{connection.vendor}: no one-statement path here; both are the same")
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    try:
        for write in ways.values():  # warm-up: connections, compiled statements
            timed(write, session, 20)
        for _ in range(args.rounds):
            for name, write in ways.items():
                results[name].append(timed(write, session, args.events))
    finally:
        Session.objects.filter(app_name=APP).delete()
    print(f"{connection.vendor}, {args.events} events x {args.rounds} rounds")
    print(f"{'way':<15} {'wall ms/event':>14} {'CPU ms/event':>13}")
    for name, rounds in results.items():
        wall = statistics.median(r[0] for r in rounds)
        cpu = statistics.median(r[1] for r in rounds)
        print(f"{name:<15} {wall:>14.3f} {cpu:>13.3f}")


if __name__ == "__main__":
    main()
