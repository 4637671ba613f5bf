"""SQLite as the embedded default's database: write-ahead logging, set once.

WAL lets readers go on while a turn writes, and a commit appends to the log
instead of rewriting a rollback journal. The mode is stored in the database file,
so it is set once, after `migrate` (which `make run`, the tests and the benchmarks
all run before serving), never on each new connection, where switching would need
a lock other connections may hold. `synchronous=NORMAL`, SQLite's advice for WAL,
is per connection: settings.py's init_command.
"""

from django.db import connections


def use_write_ahead_log(*, using: str = "default", **_: object) -> None:
    """post_migrate receiver: put a SQLite database in WAL mode (no-op elsewhere)."""
    connection = connections[using]
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode=WAL")
