"""Connections to SQLite files of a test's own, through project.patches.sqlite_pool's backend."""

from pathlib import Path

from django.db.utils import load_backend

BACKEND = load_backend("project.patches.sqlite_pool")


def wrapper(path: Path, *, init_command: str = "PRAGMA synchronous=NORMAL;"):
    """A connection to `path` as Django builds one for a thread (settings of the
    embedded default: IMMEDIATE transactions, `init_command` run on each
    connection, synchronous=NORMAL unless told otherwise)."""
    settings = {
        "ENGINE": "project.patches.sqlite_pool",
        "NAME": str(path),
        "OPTIONS": {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": init_command,
        },
        "ATOMIC_REQUESTS": False,
        "AUTOCOMMIT": True,
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": False,
        "TIME_ZONE": None,
        "USER": "",
        "PASSWORD": "",
        "HOST": "",
        "PORT": "",
        "TEST": {},
    }
    return BACKEND.DatabaseWrapper(settings, alias=f"pool-{path.name}")
