"""project.patches.sqlite_pool.checkpoints: a WAL's pages reach the database file on a
thread of the process's own, not in the commit of whoever wrote them.

Each test has database files of its own, written through the pool's backend as a
turn writes; the main file is read apart from its log (SQLite's `immutable`), so a
row is found there only once a checkpoint has copied it in.
"""

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from project.patches.sqlite_pool import base as pool
from project.patches.sqlite_pool import checkpoints
from tests.project.patches.sqlite_wrappers import wrapper

WAIT = 5.0  # seconds a thread may take, on a loaded machine


@pytest.fixture(autouse=True)
def _own_files_only(django_db_blocker, settings):
    settings.TOOLCRIB_SQLITE_CHECKPOINT_SECONDS = 0.05
    with django_db_blocker.unblock():
        checkpoints.stop_all()
        pool.close_idle()
        yield
        pool.close_idle()
        checkpoints.stop_all()


def new_database(path: Path) -> None:
    """A database file in WAL mode with an empty table, its log copied in."""
    with sqlite3.connect(path, isolation_level=None) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE notes (text TEXT)")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()


def write(path: Path, text: str, *, init_command: str) -> int:
    """Commit one row as a turn's thread would; the connection's autocheckpoint."""
    found: list[int] = []

    def run() -> None:
        connection = wrapper(path, init_command=init_command)
        try:
            with connection.cursor() as cursor:
                cursor.execute("INSERT INTO notes (text) VALUES (%s)", [text])
                cursor.execute("PRAGMA wal_autocheckpoint")
                found.append(cursor.fetchone()[0])
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return found[0]


def in_database_file(path: Path) -> list[str] | None:
    """The rows the database file itself holds, its log left unread; None if the
    file was caught mid-checkpoint (read as immutable, it takes no lock)."""
    connection = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        rows = connection.execute("SELECT text FROM notes").fetchall()
    except sqlite3.DatabaseError:
        return None
    finally:
        connection.close()
    return [text for (text,) in rows]


def eventually(check, timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


def checkpointing(path: Path) -> bool:
    """Whether a thread of this process checkpoints `path` now."""
    running = checkpoints._running.get(str(path))
    return running is not None and running.thread.is_alive()


def test_a_commit_reaches_the_database_file_by_the_thread(tmp_path, settings):
    path = tmp_path / "turns.sqlite3"
    new_database(path)
    bound = settings.SQLITE_LOG_BOUND_PAGES

    autocheckpoint = write(
        path, "the weather", init_command=f"PRAGMA wal_autocheckpoint={bound};"
    )

    assert autocheckpoint == bound  # the writer's commit copies nothing itself
    assert checkpointing(path)
    assert eventually(lambda: in_database_file(path) == ["the weather"])


def test_with_the_thread_off_a_commit_stays_in_the_log(tmp_path, settings):
    settings.TOOLCRIB_SQLITE_CHECKPOINT_SECONDS = 0
    path = tmp_path / "turns.sqlite3"
    new_database(path)

    write(path, "the weather", init_command="PRAGMA synchronous=NORMAL;")
    time.sleep(0.3)

    assert not checkpointing(path)
    assert in_database_file(path) == []  # SQLite's own waits for 1,000 pages


def test_a_database_made_again_at_its_path_is_checkpointed_by_a_new_thread(tmp_path):
    path = tmp_path / "turns.sqlite3"
    new_database(path)
    write(path, "first", init_command="")
    assert eventually(lambda: in_database_file(path) == ["first"])
    first = checkpoints._running[str(path)].thread

    # As Django makes a test database again: its connections closed first.
    checkpoints.stop_all()
    assert not first.is_alive()
    for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)
    new_database(path)
    write(path, "second", init_command="PRAGMA wal_autocheckpoint=10000;")

    assert eventually(lambda: in_database_file(path) == ["second"])
    assert checkpoints._running[str(path)].thread is not first


def test_the_thread_ends_when_its_file_is_deleted(tmp_path):
    path = tmp_path / "turns.sqlite3"
    new_database(path)
    write(path, "first", init_command="")
    thread = checkpoints._running[str(path)].thread

    for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)

    assert eventually(lambda: not thread.is_alive())
    assert str(path) not in checkpoints._running
