"""The database: SQLite by default, PostgreSQL (or anything dj-database-url reads)
with DATABASE_URL.
"""

import os

import dj_database_url

from project.settings.base import DATA_DIR, env, env_bool
from project.settings.patches_off import patch_on

# Database: SQLite file by default, anything dj-database-url understands otherwise.
DATABASE_URL = env("DATABASE_URL", f"sqlite:///{DATA_DIR / 'toolcrib.sqlite3'}")
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
# SQLite: seconds between the WAL checkpoints a thread of each process runs (0:
# SQLite's own, in whichever commit takes the log past 1,000 pages).
TOOLCRIB_SQLITE_CHECKPOINT_SECONDS = float(
    env("TOOLCRIB_SQLITE_CHECKPOINT_SECONDS", "0.2")
)
# With that thread, a connection's own commit checkpoints only past this many
# pages of log (40 MB), should the thread fall behind; SQLite's default is 1,000.
SQLITE_LOG_BOUND_PAGES = 10_000
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE transactions take the write lock up front, so concurrent turns queue
    # on the lock instead of failing to upgrade a read lock ("database is locked").
    # Write-ahead logging: readers never wait for the writer, and a commit appends
    # to the log instead of rewriting a rollback journal; NORMAL syncs at
    # checkpoints, not every commit (a power cut may lose the last commits, never
    # corrupt the file). SQLite's own advice for an application database.
    # Connections kept open and lent again, as PostgreSQL's pool does below.
    if patch_on("sqlite_pool"):
        DATABASES["default"]["ENGINE"] = "project.patches.sqlite_pool"
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        # WAL itself is set once, after migrate (project/sqlite.py). Its
        # checkpoints run on a thread of their own, a connection's commit running
        # one only past a bound (project/patches/sqlite_pool/checkpoints.py).
        "init_command": "PRAGMA synchronous=NORMAL;"
        + (
            f" PRAGMA wal_autocheckpoint={SQLITE_LOG_BOUND_PAGES};"
            if TOOLCRIB_SQLITE_CHECKPOINT_SECONDS > 0 and patch_on("sqlite_pool")
            else ""
        ),
    }
    # A file (not :memory:) so turn threads share it; one per process so parallel
    # test runs on one machine never share a database.
    DATABASES["default"]["TEST"] = {
        "NAME": str(DATA_DIR / f"test-{os.getpid()}.sqlite3")
    }
else:
    # pytest-django's test database, one per process: parallel runs on one server
    # never share (or drop) each other's.
    DATABASES["default"]["TEST"] = {
        "NAME": f"test_{DATABASES['default']['NAME']}_{os.getpid()}"
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A pool of connections per process (psycopg_pool): a request, a socket's call
    # or a turn borrows one and gives it back when Django closes it, instead of
    # opening a new PostgreSQL backend each time (conn_max_age stays 0).
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": int(env("TOOLCRIB_DB_POOL_SIZE", "20")),
        "timeout": 30,
    }
    # Parameters sent apart from the statement (PostgreSQL binds them), not quoted
    # into its text by psycopg in Python; and a statement run twice on a connection
    # is prepared there, parsed and planned once. A turn runs the same ~20
    # statements each time: ~10% of a worker's CPU a turn (bench/README.md).
    # TOOLCRIB_DB_PREPARE_THRESHOLD=off behind a pooler that cannot keep prepared
    # statements (PgBouncer's transaction mode before 1.21).
    if env_bool("TOOLCRIB_DB_SERVER_BINDING", True):
        DATABASES["default"]["OPTIONS"]["server_side_binding"] = True
    _prepare = env("TOOLCRIB_DB_PREPARE_THRESHOLD", "2").strip().lower()
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = (
        None if _prepare in {"off", "none", ""} else int(_prepare)
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
