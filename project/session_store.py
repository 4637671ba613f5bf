"""Django's database sessions, refusing a cookie that is not a session key before any query.

Django makes every key from VALID_KEY_CHARS; a forged cookie with other characters
(a NUL is a 500 on PostgreSQL) is no session, as an unknown key is.
"""

from django.contrib.sessions.backends.base import VALID_KEY_CHARS
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore

_KEY_CHARS = frozenset(VALID_KEY_CHARS)


class SessionStore(DatabaseSessionStore):
    """The database session store, for keys made of Django's own characters only."""

    def _validate_session_key(self, key: str | None) -> bool:
        return bool(super()._validate_session_key(key)) and set(key) <= _KEY_CHARS
