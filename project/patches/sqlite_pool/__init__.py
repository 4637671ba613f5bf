"""Django's SQLite backend with the process's connections kept open and lent again
(base.py).

Written for Django 5.2 (its SQLite DatabaseWrapper's `get_new_connection`,
`_close` and `init_commands`, SQLiteCursorWrapper's `convert_query` and
`FORMAT_QMARK_REGEX`) and SQLite 3.40+ (WAL, `wal_checkpoint(PASSIVE)`). Off
(`TOOLCRIB_PATCHES_OFF=sqlite_pool`): settings name Django's own sqlite3 backend,
with no checkpointing thread and SQLite's own checkpoints (no raised
`wal_autocheckpoint`).
"""

WRITTEN_FOR = {"django": "5.2"}
