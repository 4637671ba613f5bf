"""The process's turn loop: the event loop that runs its turns.

In a web server, once a socket has bound its loop (agents.doorbell.streams), inline
turns run on that loop, the sockets' own: a turn's frames then reach its sockets
without crossing threads (each crossing wakes the other loop's thread and hands the
interpreter over, twice a frame). Elsewhere (a Celery worker, a web server before
any socket connected, a management command) turns run on one event loop of their
own, in a daemon thread.

Either way the loop outlives the turn, so what a turn leaves open for the next one
in this process (an MCP import's session, its stdio server) stays on a loop that is
still running: a loop per turn (asyncio.run) would strand it on a closed one.
"""

import asyncio
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from agents.doorbell import streams

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def turn_loop() -> asyncio.AbstractEventLoop:
    """The loop turns start on: the sockets' loop while one is bound and runs,
    else the process's own, started on first use in a daemon thread."""
    home = streams.home_loop()
    if home is not None:
        return home
    return _own_loop()


def _own_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _loop_lock:
        if _loop is None or not _loop.is_running():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=serve, name="toolcrib-turns", daemon=True).start()
            ready.wait()
            _loop = loop
        return _loop


def run_on_turn_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on the turn loop and wait for its result in this thread.

    In an empty context: the caller's context variables must not leak into it.
    """
    loop = turn_loop()
    if _running_loop() is loop:
        raise RuntimeError("a turn cannot be waited for on the loop it runs on")
    future = contextvars.Context().run(
        asyncio.run_coroutine_threadsafe, coroutine, loop
    )
    return future.result()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
