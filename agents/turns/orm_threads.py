"""A turn's thread for the ORM: one of its own while it runs, kept for the next.

Every ORM call of a turn (`sync_to_async`, thread-sensitive) runs on one thread
that no other turn and no request shares while the turn runs, as Django gives each
request one: a caller blocked waiting for a turn can never starve it. Starting that
thread for every turn and joining it at the end cost the turn loop a thread start
and a join each turn; here a turn borrows an idle one (asgiref's
`ThreadSensitiveContext(executor=...)`) and gives it back when it ends. Threads
beyond `KEPT` idle ones are stopped when given back.
"""

import contextlib
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext

KEPT = 64  # idle threads kept for later turns; the rest are stopped

_idle: list[ThreadPoolExecutor] = []
_lock = threading.Lock()


@contextlib.asynccontextmanager
async def turn_thread() -> AsyncIterator[None]:
    """Within the block, thread-sensitive ORM calls run on a thread of the turn's
    own (an idle one, or a new one)."""
    with _lock:
        executor = _idle.pop() if _idle else None
    if executor is None:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolcrib-orm")
    try:
        async with ThreadSensitiveContext(executor=executor):
            yield
    finally:
        _give_back(executor)


def _give_back(executor: ThreadPoolExecutor) -> None:
    with _lock:
        if len(_idle) < KEPT:
            _idle.append(executor)
            return
    executor.shutdown(wait=False)


def idle() -> int:
    """How many threads wait for a turn."""
    with _lock:
        return len(_idle)
