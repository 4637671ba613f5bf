"""agents.turns.queue's leases under a worker's threads: turns taking and giving up
leases at once, from many threads, leave in the cache exactly the leases of the
turns still running, written by the process's one renewing thread, which ends when
none is held."""

import threading
import time
import uuid

import pytest
from asgiref.sync import async_to_sync
from django.core.cache import cache

from agents.turns import queue
from tests.threads import at_once

RUNS = 20  # each thread's
WAIT = 5


def renewers() -> int:
    return sum(t.name == "toolcrib-leases" for t in threading.enumerate())


def until(done) -> bool:
    deadline = time.monotonic() + WAIT
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def leases_on(settings):
    settings.TOOLCRIB_RUN_LEASE = 0.3  # renewed every 0.1 s
    assert until(lambda: queue._renewer is None)  # none of an earlier test's


def test_turns_taking_and_giving_up_leases_at_once_leave_only_the_running_ones(
    leases_on,
):
    runs = [[uuid.uuid4() for _ in range(RUNS)] for _ in range(8)]

    def turns(index: int) -> None:
        for run_id in runs[index]:
            queue._hold(run_id)
        for run_id in runs[index][::2]:  # half the turns end
            async_to_sync(queue.arelease_lease)(run_id)

    at_once(turns)

    running = [run_id for mine in runs for run_id in mine[1::2]]
    ended = [run_id for mine in runs for run_id in mine[::2]]
    assert renewers() == 1
    assert until(
        lambda: (
            set(cache.get_many([queue.lease_key(r) for r in running + ended]))
            == {queue.lease_key(r) for r in running}
        )
    )
    for run_id in running:
        async_to_sync(queue.arelease_lease)(run_id)
    assert until(lambda: queue._renewer is None and renewers() == 0)
    assert cache.get_many([queue.lease_key(r) for r in running]) == {}
