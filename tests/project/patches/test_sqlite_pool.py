"""project.patches.sqlite_pool: SQLite connections Django closes are lent again, clean.

Each test opens its own database file through the backend, as Django does for a
request, a turn or a socket's call: a wrapper per thread, closed when that ends.
"""

import threading
from pathlib import Path

import pytest
from django.db.utils import OperationalError

from project.patches.sqlite_pool import base as pool
from project.patches.sqlite_pool import checkpoints
from tests.project.patches.sqlite_wrappers import wrapper


@pytest.fixture(autouse=True)
def _no_idle_connections(django_db_blocker):
    # Databases of these tests' own, not the test database pytest-django guards;
    # their checkpointing threads stopped with them.
    with django_db_blocker.unblock():
        pool.close_idle()
        yield
        pool.close_idle()
        checkpoints.stop_all()


def in_a_thread(fn):
    """Run fn on a new thread, as a request or a turn gets one; its result."""
    out = {}
    thread = threading.Thread(target=lambda: out.setdefault("value", fn()))
    thread.start()
    thread.join()
    return out["value"]


def another_writer_writes(path: Path) -> None:
    """A write on another connection, failing fast if a lock is still held."""
    other = wrapper(path)
    other.settings_dict["OPTIONS"]["timeout"] = 0.1
    with other.cursor() as cursor:
        cursor.execute("INSERT INTO notes (text) VALUES ('next')")


def mid_atomic_block(db):
    """Leave `db` as transaction.atomic leaves it mid-block; its raw connection."""
    db.ensure_connection()
    db.set_autocommit(False)
    db.in_atomic_block = True
    return db.connection


@pytest.fixture
def database(tmp_path):
    path = tmp_path / "pool.sqlite3"
    first = wrapper(path)
    with first.cursor() as cursor:
        cursor.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    first.close()
    pool.close_idle()
    return path


def test_a_closed_connection_is_lent_to_the_next_thread(database):
    def use_once():
        db = wrapper(database)
        with db.cursor() as cursor:
            cursor.execute("INSERT INTO notes (text) VALUES ('hello')")
        raw = db.connection
        db.close()
        return raw

    first = in_a_thread(use_once)
    second = in_a_thread(use_once)
    assert second is first  # not opened again
    reader = wrapper(database)
    with reader.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM notes")
        assert cursor.fetchone() == (2,)


def test_what_a_borrower_left_uncommitted_is_rolled_back_not_handed_on(database):
    def leave_a_transaction_open():
        db = wrapper(database)
        db.set_autocommit(False)
        with db.cursor() as cursor:
            cursor.execute("INSERT INTO notes (text) VALUES ('half done')")
        assert db.connection.in_transaction
        db.close()

    in_a_thread(leave_a_transaction_open)
    db = wrapper(database)
    with db.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM notes")
        assert cursor.fetchone() == (0,)
    assert db.get_autocommit()  # Django's own state, reset on connect
    assert not db.connection.in_transaction
    # And another writer can write: the lock the half-done write took is gone.
    another_writer_writes(database)


def test_a_connection_closed_inside_an_atomic_block_is_not_lent(database):
    db = wrapper(database)
    raw = mid_atomic_block(db)
    db.close()
    db.in_atomic_block = False
    other = wrapper(database)
    other.ensure_connection()
    assert other.connection is not raw


def test_pragmas_a_borrower_changed_are_set_again(database):
    db = wrapper(database)
    with db.cursor() as cursor:
        cursor.execute("PRAGMA foreign_keys = OFF")  # as the schema editor does
    db.close()
    again = wrapper(database)
    with again.cursor() as cursor:
        cursor.execute("PRAGMA foreign_keys")
        assert cursor.fetchone() == (1,)
        cursor.execute("PRAGMA synchronous")
        assert cursor.fetchone() == (1,)  # NORMAL


def test_a_replaced_database_file_is_never_read_through_an_old_connection(
    database, tmp_path
):
    db = wrapper(database)
    with db.cursor() as cursor:
        cursor.execute("INSERT INTO notes (text) VALUES ('old file')")
    db.close()  # kept idle, open on the old file
    # Another database moved into its place (a restore, a test's fresh copy).
    fresh = tmp_path / "fresh.sqlite3"
    other = wrapper(fresh)
    with other.cursor() as cursor:
        cursor.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    other.connection.close()  # closed for real, not kept
    other.connection = None
    fresh.replace(database)
    reader = wrapper(database)
    with reader.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM notes")
        assert cursor.fetchone() == (0,)


def test_at_most_max_idle_connections_are_kept(database):
    wrappers = [wrapper(database) for _ in range(pool.MAX_IDLE + 3)]
    for db in wrappers:
        db.ensure_connection()
    raws = [db.connection for db in wrappers]
    for db in wrappers:
        db.close()
    kept = [raw for raw in raws if _is_open(raw)]
    assert len(kept) == pool.MAX_IDLE


def test_an_in_memory_database_is_not_pooled(tmp_path):
    db = wrapper(Path(":memory:"))
    db.settings_dict["NAME"] = ":memory:"
    db.ensure_connection()
    raw = db.connection
    db._close()  # Django never closes an in-memory database; its _close is real
    assert not _is_open(raw)


def count_notes(path: Path) -> int:
    reader = wrapper(path)
    with reader.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM notes")
        (count,) = cursor.fetchone()
    reader.close()
    return count


def test_a_released_connection_stays_open_on_its_thread_for_its_next_use(database):
    """A turn's thread releases between turns: the same connection serves the
    next, not lent to another thread meanwhile, what was written committed."""
    db = wrapper(database)
    with db.cursor() as cursor:
        cursor.execute("INSERT INTO notes (text) VALUES ('one turn')")
    raw = db.connection

    db.release()

    assert db.connection is raw and _is_open(raw)
    assert pool._idle.get(pool._key(db.get_connection_params())) is None
    with db.cursor() as cursor:
        cursor.execute("INSERT INTO notes (text) VALUES ('the next')")
    assert db.connection is raw
    assert count_notes(database) == 2


def test_what_a_unit_left_uncommitted_is_rolled_back_on_release(database):
    db = wrapper(database)
    db.ensure_connection()
    raw = db.connection
    raw.execute("BEGIN")  # a transaction Django was not told of
    raw.execute("INSERT INTO notes (text) VALUES ('half done')")

    db.release()

    assert db.connection is raw and not raw.in_transaction
    assert db.get_autocommit()
    assert count_notes(database) == 0
    # And another writer can write: the lock the half-done write took is gone.
    another_writer_writes(database)


def test_a_connection_left_out_of_autocommit_is_given_up_on_release(database):
    """Not kept in a state the next turn did not ask for: closed as close() does,
    what it wrote rolled back, and lent again with Django's autocommit reset."""
    db = wrapper(database)
    db.set_autocommit(False)
    with db.cursor() as cursor:
        cursor.execute("INSERT INTO notes (text) VALUES ('half done')")

    db.release()

    assert db.connection is None
    assert count_notes(database) == 0
    again = wrapper(database)
    again.ensure_connection()
    assert again.get_autocommit()


def test_a_connection_released_inside_an_atomic_block_is_closed(database):
    db = wrapper(database)
    raw = mid_atomic_block(db)

    db.release()

    assert not _is_open(raw)  # not kept, not lent
    db.in_atomic_block = False


@pytest.mark.parametrize("left", ["needs rollback", "an error"])
def test_a_connection_released_after_an_error_is_given_up_as_close_does(database, left):
    """Not kept on the thread: closed as after a request, the pool's checks
    deciding whether another thread may have it."""
    db = wrapper(database)
    db.ensure_connection()
    if left == "needs rollback":
        db.needs_rollback = True
    else:
        with pytest.raises(OperationalError), db.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table")
        assert db.errors_occurred

    db.release()

    assert db.connection is None


def test_a_released_connection_whose_file_was_replaced_is_closed(database, tmp_path):
    db = wrapper(database)
    with db.cursor() as cursor:
        cursor.execute("INSERT INTO notes (text) VALUES ('old file')")
    fresh = tmp_path / "fresh.sqlite3"
    other = wrapper(fresh)
    with other.cursor() as cursor:
        cursor.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    other.connection.close()
    other.connection = None
    fresh.replace(database)

    db.release()

    assert db.connection is None
    with db.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM notes")
        assert cursor.fetchone() == (0,)


def _is_open(raw) -> bool:
    try:
        raw.execute("SELECT 1")
    except Exception:  # noqa: BLE001 - sqlite3.ProgrammingError once closed
        return False
    return True


def test_statements_run_as_written_whether_their_conversion_is_kept_or_not(database):
    from project.patches.sqlite_pool import cursor as kept

    db = wrapper(database)
    kept._qmark_kept.cache_clear()
    long_text = "x" * kept.LONGEST
    with db.cursor() as cursor:
        # A literal percent sign ("%%"), a placeholder, and both in one statement.
        for text in ["50%", "a %s b", long_text]:
            for _ in range(2):  # the second run uses the kept conversion
                cursor.execute(
                    "INSERT INTO notes (text) VALUES (%s || '%%' || %s)",
                    [text, "!"],
                )
        cursor.execute(
            "SELECT text FROM notes WHERE text LIKE %s AND text NOT LIKE '%%zz%%'",
            ["%!"],
        )
        rows = [row[0] for row in cursor.fetchall()]
        # A statement longer than LONGEST (a bulk INSERT, say) is converted each
        # time and not kept; it still runs.
        cursor.execute(
            "SELECT COUNT(*) FROM notes WHERE text = %s" + " " * kept.LONGEST,
            [long_text + "%!"],
        )
        (long_rows,) = cursor.fetchone()
    db.close()
    assert rows == [t + "%!" for t in ["50%", "a %s b", long_text] for _ in range(2)]
    assert long_rows == 2
    info = kept._qmark_kept.cache_info()
    assert (info.hits, info.currsize) == (5, 2)  # the INSERT kept; the long one not
