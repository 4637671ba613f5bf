"""The process's turn loop: one event loop, in a daemon thread, that runs every turn.

Inline turns (executors.py) and a Celery worker's turns (tasks.py) both run here,
so what a turn leaves open for the next one in this process (an MCP import's
session, its stdio server) stays on a loop that is still running: a loop per turn
(asyncio.run) would strand it on a closed one.
"""

import asyncio
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def turn_loop() -> asyncio.AbstractEventLoop:
    """The process's turn loop, started on first use in a daemon thread."""
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
    future = contextvars.Context().run(
        asyncio.run_coroutine_threadsafe, coroutine, loop
    )
    return future.result()
