"""SQLite's WAL checkpoints on a thread of the process's own, not on a writer's.

In WAL mode a commit appends pages to the log, and a checkpoint copies them back
into the database file, syncing both files (`synchronous=NORMAL`). SQLite runs one
itself in whichever connection's commit takes the log past 1,000 pages: a turn's
event write every seven to ten turns (a turn writes 100 to 150 pages), which then
waits for the copy and two fsyncs before its event is published. At C = 1 that
made the slowest 1% of the embedded default's turns about 25% slower
(bench/README.md).

Here one daemon thread per database file and process runs a PASSIVE checkpoint
every TOOLCRIB_SQLITE_CHECKPOINT_SECONDS (PASSIVE waits for no lock: it copies what
no reader still needs, as SQLite's own does), on a connection of its own, and every
other connection (settings.py's init_command) checkpoints in its own commit only
past SQLITE_LOG_BOUND_PAGES, should the thread fall behind. A commit is no less
durable: the log is synced within one interval of it, not once 1,000 pages have
gathered. The thread ends when its file is deleted, and is stopped before a test
database is made or deleted (`stop_all`, as the pool's idle connections are closed
then); the next connection to that path starts another.

The same thread keeps the file's planner statistics current, every
`project.sqlite.STATISTICS_SECONDS` (`collect_statistics`).
"""

import logging
import os
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import quote

from project import sqlite as statistics

logger = logging.getLogger(__name__)


@dataclass
class _Checkpointer:
    path: str
    interval: float
    pid: int = field(default_factory=os.getpid)
    stopped: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None


_lock = threading.Lock()
_running: dict[str, _Checkpointer] = {}


def watch(path: str, *, interval: float) -> None:
    """Checkpoint the database file at `path` on a thread of this process's own,
    every `interval` seconds, from now on (once per file and process; a fork's
    child starts its own). A no-op if `interval` is not positive."""
    if interval <= 0:
        return
    pid = os.getpid()
    running = _running.get(path)
    if running is not None and running.pid == pid:
        return
    with _lock:
        running = _running.get(path)
        if running is not None and running.pid == pid:
            return
        checkpointer = _Checkpointer(path=path, interval=interval)
        checkpointer.thread = threading.Thread(
            target=_run,
            args=(checkpointer,),
            name="toolcrib-sqlite-checkpoints",
            daemon=True,
        )
        _running[path] = checkpointer
    checkpointer.thread.start()


def stop_all(*, timeout: float = 5.0) -> None:
    """Stop every checkpointing thread of this process, each connection closed
    when this returns: before a database file is deleted or made again at its
    path (a test database), where a connection still open on the old file would
    share the new one's log. The next connection to a path starts its thread again.
    """
    with _lock:
        stopping = [c for c in _running.values() if c.pid == os.getpid()]
        _running.clear()
    for checkpointer in stopping:
        checkpointer.stopped.set()
    for checkpointer in stopping:
        if checkpointer.thread is not None and checkpointer.thread.is_alive():
            checkpointer.thread.join(timeout)


def _run(checkpointer: _Checkpointer) -> None:
    connection, inode, failing = None, None, False
    analyzed = time.monotonic()
    try:
        while not checkpointer.stopped.wait(checkpointer.interval):
            current = file_inode(checkpointer.path)
            if current is None:
                return  # deleted: the next connection to this path starts another
            try:
                if connection is None or current != inode:
                    _close(connection)
                    connection, inode = _open(checkpointer.path), current
                connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                if time.monotonic() - analyzed >= statistics.STATISTICS_SECONDS:
                    analyzed = time.monotonic()
                    statistics.collect_statistics(connection.cursor())
                failing = False
            except sqlite3.Error:
                # Tried again next time; meanwhile each connection's own
                # checkpoint (SQLITE_LOG_BOUND_PAGES) bounds the log. Said once.
                if not failing:
                    logger.warning(
                        "sqlite checkpoint failed path=%s",
                        checkpointer.path,
                        exc_info=True,
                    )
                failing = True
                _close(connection)
                connection = None
    finally:
        _close(connection)
        with _lock:
            if _running.get(checkpointer.path) is checkpointer:
                del _running[checkpointer.path]


def _open(path: str) -> sqlite3.Connection:
    # The file as it is (mode=rw: never created here), in autocommit (no implicit
    # BEGIN); a second's wait for the lock a checkpoint takes while another
    # connection opens or closes the log.
    return sqlite3.connect(
        f"file:{quote(path)}?mode=rw",
        uri=True,
        timeout=1.0,
        isolation_level=None,
        check_same_thread=False,
    )


def _close(connection: sqlite3.Connection | None) -> None:
    if connection is not None:
        connection.close()


def file_inode(path: str) -> int | None:
    """The inode of the file at `path`, None if there is none (the pool's test of
    a replaced file too, base.py)."""
    try:
        return os.stat(path).st_ino
    except OSError:
        return None
