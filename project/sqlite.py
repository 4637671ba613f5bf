"""SQLite as the embedded default's database: write-ahead logging, set once.

WAL lets readers go on while a turn writes, and a commit appends to the log
instead of rewriting a rollback journal. The mode is stored in the database file,
so it is set once, after `migrate` (which `make run`, the tests and the benchmarks
all run before serving), never on each new connection, where switching would need
a lock other connections may hold. `synchronous=NORMAL`, SQLite's advice for WAL,
is per connection: settings.py's init_command.

Its statistics (`sqlite_stat1`, which the query planner reads to choose between
indexes) are collected after `migrate` too, and then every STATISTICS_SECONDS by
the checkpointing thread (sqlite_pool/checkpoints.py), as SQLite's documentation
advises for long-lived connections: `PRAGMA optimize=0x10002` from SQLite 3.46,
which looks at every table and analyzes those that changed enough; before 3.46
that pragma only looks at the tables its own connection queried, so a bounded
`ANALYZE` does the same work. `analysis_limit` bounds either to a sample of each
index, milliseconds on a database of millions of rows.
"""

import sqlite3

from django.db import connections

ANALYSIS_LIMIT = 400
STATISTICS_SECONDS = 3600.0


def use_write_ahead_log(*, using: str = "default", **_: object) -> None:
    """post_migrate receiver: put a SQLite database in WAL mode and collect its
    statistics (no-op elsewhere)."""
    connection = connections[using]
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode=WAL")
        collect_statistics(cursor)


def collect_statistics(cursor) -> None:
    """Bring the planner's statistics up to date, sampling at most ANALYSIS_LIMIT
    rows an index."""
    cursor.execute(f"PRAGMA analysis_limit={ANALYSIS_LIMIT}")
    if sqlite3.sqlite_version_info >= (3, 46):
        cursor.execute("PRAGMA optimize=0x10002")
    else:
        cursor.execute("ANALYZE")
