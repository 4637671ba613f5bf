"""A session's state by scope, as InMemorySessionService splits it: `app:` keys
are AppState rows and `user:` keys UserState rows (one row per key, stored
without the prefix), plain keys live in Session.state, and `temp:` keys are never
stored.

A state entry holding a credential (where ADK's REST tools cache the one they
used, agents.redaction.is_credential_state) is kept like a `temp:` key: on the
in-memory session for the rest of the invocation (keep_credentials_in_memory),
never in a stored row or in the event, and left out when read
(without_credentials).
"""

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from django.db import connection, models
from google.adk.events import Event as AdkEvent
from google.adk.sessions import Session as AdkSession

from agents.models import AppState, Session, UserState
from agents.redaction import is_credential_state, redact_state


def session_state(*, session: Session) -> dict[str, dict[str, Any]]:
    """A session's stored state by scope, keys without prefixes, as it may be shown."""
    return {
        "session": redact_state(session.state),
        "user": redact_state(
            user_state(app_name=session.app_name, user_id=session.user_id)
        ),
        "app": redact_state(app_state(app_name=session.app_name)),
    }


def app_state(*, app_name: str) -> dict[str, Any]:
    """An app's `app:` state, keys without the prefix."""
    return dict(AppState.objects.filter(app_name=app_name).values_list("key", "value"))


def user_state(*, app_name: str, user_id: str) -> dict[str, Any]:
    """A user's `user:` state of an app, keys without the prefix."""
    rows = UserState.objects.filter(app_name=app_name, user_id=user_id)
    return dict(rows.values_list("key", "value"))


def scoped_state(
    *, app_name: str, user_id: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The app's state and the user's, read in one query (UNION ALL, each row
    tagged with its scope), written here: the ORM's compiler cost more than the
    query itself, once a turn."""
    with connection.cursor() as cursor:
        cursor.execute(
            _scoped_state_sql(connection.vendor), [app_name, app_name, user_id]
        )
        rows = cursor.fetchall()
    decode = AppState._meta.get_field("value").from_db_value
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    for which, key, value in rows:
        (app if which == "app" else user)[key] = decode(value, None, connection)
    return app, user


@lru_cache(maxsize=4)
def _scoped_state_sql(vendor: str) -> str:
    quote = connection.ops.quote_name
    app, user = quote(AppState._meta.db_table), quote(UserState._meta.db_table)
    key, value = quote("key"), quote("value")
    return (
        f"SELECT 'app', {key}, {value} FROM {app} WHERE {quote('app_name')} = %s"
        f" UNION ALL SELECT 'user', {key}, {value} FROM {user}"
        f" WHERE {quote('app_name')} = %s AND {quote('user_id')} = %s"
    )


def save_scoped_state(
    *, app_name: str, user_id: str, deltas: Mapping[str, Mapping[str, Any]]
) -> None:
    """Upsert the `app` and `user` deltas, one row per key."""
    app_rows = [
        AppState(app_name=app_name, key=key, value=value)
        for key, value in sorted(deltas["app"].items())
    ]
    user_rows = [
        UserState(app_name=app_name, user_id=user_id, key=key, value=value)
        for key, value in sorted(deltas["user"].items())
    ]
    # One row per key: writers of different keys never overwrite each other. Sorted
    # keys make concurrent writers lock rows in one order (no PostgreSQL deadlock).
    _upsert(AppState, app_rows, unique_fields=["app_name", "key"])
    _upsert(UserState, user_rows, unique_fields=["app_name", "user_id", "key"])


def _upsert(
    model: type[models.Model], rows: Sequence[models.Model], *, unique_fields: list[str]
) -> None:
    if not rows:
        return
    model.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=unique_fields,
        update_fields=["value", "updated_at"],
    )


def keep_credentials_in_memory(session: AdkSession, event: AdkEvent) -> None:
    """Apply the delta's credential entries to `session` only, like `temp:` keys."""
    delta = event.actions.state_delta
    held = {k: v for k, v in delta.items() if is_credential_state(k, v)}
    if not held:
        return
    session.state.update(held)
    event.actions.state_delta = {k: v for k, v in delta.items() if k not in held}


def without_credentials(state: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of session state without its credential entries."""
    return {k: v for k, v in state.items() if not is_credential_state(k, v)}
