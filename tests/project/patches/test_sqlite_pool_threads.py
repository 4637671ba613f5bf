"""project.patches.sqlite_pool under threads: connections lent to threads opening at once
are never lent twice, closed ones are kept up to the bound, each statement's
converted text is its own, and one checkpointing thread serves a file however many
threads connect to it first at once.

Each test opens a database file of its own through the backend, as Django does for
a request, a turn or a socket's call (tests/project/patches/sqlite_wrappers.py).
"""

import threading

import pytest

from project.patches.sqlite_pool import base as pool
from project.patches.sqlite_pool import checkpoints, cursor
from tests.project.patches.sqlite_wrappers import wrapper
from tests.threads import at_once

ROUNDS = 5


@pytest.fixture(autouse=True)
def _own_files_only(django_db_blocker, settings):
    settings.TOOLCRIB_SQLITE_CHECKPOINT_SECONDS = 0.05
    with django_db_blocker.unblock():
        checkpoints.stop_all()
        pool.close_idle()
        yield
        pool.close_idle()
        checkpoints.stop_all()


@pytest.fixture
def database(tmp_path):
    path = tmp_path / "pool.sqlite3"
    first = wrapper(path)
    with first.cursor() as cursor_:
        cursor_.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    first.close()
    return path


def test_threads_opening_at_once_never_share_a_connection(database):
    held = threading.Barrier(8)  # every thread holds its connection at once

    def write(index: int):
        db = wrapper(database)
        with db.cursor() as cursor_:
            cursor_.execute("INSERT INTO notes (text) VALUES (%s)", [f"t{index}"])
        raw = db.connection
        held.wait(30)
        db.close()
        return raw

    for _ in range(ROUNDS):
        lent = at_once(write)

        assert len({id(raw) for raw in lent}) == 8
        assert len(pool._idle[next(iter(pool._idle))]) == pool.MAX_IDLE
    reader = wrapper(database)
    with reader.cursor() as cursor_:
        cursor_.execute("SELECT count(*) FROM notes")
        assert cursor_.fetchone() == (8 * ROUNDS,)
    reader.close()


def test_threads_converting_statements_at_once_each_get_their_own(database):
    cursor._qmark_kept.cache_clear()

    def convert(index: int) -> list[str]:
        return [
            cursor._qmark_kept(f"SELECT %s, {n}, '%%' FROM notes WHERE id = %s")
            for n in range(200)
        ]

    converted = at_once(convert)

    assert (
        converted
        == [[f"SELECT ?, {n}, '%' FROM notes WHERE id = ?" for n in range(200)]] * 8
    )


def test_threads_connecting_first_at_once_start_one_checkpointing_thread(database):
    at_once(lambda i: checkpoints.watch(str(database), interval=0.05))

    named = [
        thread
        for thread in threading.enumerate()
        if thread.name == "toolcrib-sqlite-checkpoints"
    ]
    assert len(named) == 1
    assert checkpoints._running[str(database)].thread is named[0]
