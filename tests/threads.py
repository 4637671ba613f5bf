"""Drive one callable from many threads at once, as a worker's thread pool does.

`at_once(call, threads=8)` starts `threads` threads that wait at one barrier, then
each runs `call(index)` with Python's thread switch interval made tiny, so the
threads interleave at almost every bytecode. It returns each thread's result, in
thread order, or raises the first exception any thread raised (with the others
attached as notes). Tests of process-global state (a cache, a compiled query, a
pool, a patched framework method) run their first use through it.
"""

import sys
import threading
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

SWITCH_INTERVAL = 1e-6


@contextmanager
def tiny_switch_interval(seconds: float = SWITCH_INTERVAL):
    """Threads switch every `seconds` (Python's default is 5 ms) while inside."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(seconds)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def at_once(
    call: Callable[[int], T], *, threads: int = 8, timeout: float = 60
) -> list[T]:
    """`call(i)` on `threads` threads released together; their results in order."""
    barrier = threading.Barrier(threads)
    results: list[Any] = [None] * threads
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            barrier.wait(timeout)
            results[index] = call(index)
        except BaseException as error:  # noqa: BLE001 - reported to the test below
            errors.append(error)

    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    with tiny_switch_interval():
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout)
    stuck = [worker for worker in workers if worker.is_alive()]
    if stuck:
        raise AssertionError(f"{len(stuck)} of {threads} threads never ended")
    if errors:
        first = errors[0]
        for other in errors[1:]:
            first.add_note(f"another thread raised: {other!r}")
        raise first
    return results
