"""Django's SQLite cursor, with each statement's placeholders converted once.

Django writes SQL with `%s` placeholders and its SQLite cursor turns them into
`?` with a regular expression on every execute. A hot path runs the same few
statements again and again (a turn's: an event's UPDATE and INSERT, a Run's
claim), so the converted text is kept, by statement, in a bounded LRU. Statements
longer than `LONGEST` (a bulk INSERT of many rows, an IN list) are converted each
time, as Django does: they rarely repeat and would crowd the cache out.
"""

from functools import lru_cache

from django.db.backends.sqlite3 import base

KEPT = 1024  # converted statements kept
LONGEST = 4096  # characters; a longer statement is converted every time


@lru_cache(maxsize=KEPT)
def _qmark_kept(query: str) -> str:
    return _qmark(query)


def _qmark(query: str) -> str:
    """Django's "format" style to sqlite3's "qmark" style, as Django converts it."""
    return base.FORMAT_QMARK_REGEX.sub("?", query).replace("%%", "%")


class CursorWrapper(base.SQLiteCursorWrapper):
    def convert_query(self, query, *, param_names=None):
        if param_names is not None:  # "pyformat" style: Django's own conversion
            return super().convert_query(query, param_names=param_names)
        if len(query) > LONGEST:
            return _qmark(query)
        return _qmark_kept(query)
