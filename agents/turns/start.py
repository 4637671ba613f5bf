"""Starting a turn: record a queued Run, within the queued-turn caps, and hand it
to the executor; resume an invocation with function responses; wait for a run.

The Run rows are the queue (see queue.py); drive.py runs a turn to its end.
"""

from collections.abc import Sequence
from functools import cache, lru_cache
from uuid import UUID

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Case, F, When
from django.utils.translation import gettext as _
from google.genai import types

from agents.inputs import StoredToolChoice
from agents.models import Run, Session
from agents.titles import title_from_message
from agents.turns import executors
from project.errors import SessionClosed, TooManyTurns
from project.patches import rows
from project.patches.prepared import Param, Prepared, PreparedUpdate

UNFINISHED = (Run.Status.QUEUED, Run.Status.RUNNING)


def start_turn(
    *,
    session: Session,
    user,
    text: str,
    tool_choice: StoredToolChoice | None = None,
    eval: bool = False,
) -> Run:
    """Record a queued Run for a user message and hand it to the executor.

    The message's `tool_choice`, if any, goes with the Run to the turn's first
    model call (governance reads it there, over the agent's own). An `eval` turn
    (an eval run's, evals) is left out of budgets and usage totals.

    Raises:
        SessionClosed: The session takes no new turns.
        TooManyTurns: The session, or the user, already has as many turns queued
            or running as the settings allow.
    """
    with transaction.atomic():
        _lock_for_new_turn(session=session, user=user, text=text)
        run = rows.create(
            Run(
                session=session,
                user=user,
                text=text,
                tool_choice=tool_choice,
                eval=eval,
            )
        )
        executors.submit(run_id=run.id)
    return run


def _lock_for_new_turn(*, session: Session, user, text: str) -> None:
    """Lock the user and the session, then check there is room for one more turn.

    Counted under the locks, two messages sent at once cannot both take the last
    place (on SQLite the IMMEDIATE transaction already serializes writers). The
    UPDATE that locks the session also names it by its first message, if it has
    no title yet (agents.titles): no query of its own.
    """
    _lock_user().first(pk=user.pk)
    if not _lock_session().run(pk=session.pk, title=title_from_message(text)):
        raise SessionClosed()
    counts = _unfinished(session_id=session.pk, user_id=user.pk)
    per_session = settings.TOOLCRIB_MAX_QUEUED_TURNS_PER_SESSION
    if counts["session"] >= per_session:
        raise TooManyTurns(
            _(
                "This session already has %(per_session)s turns waiting or running; send your message when one has ended."
            )
            % {"per_session": per_session}
        )
    per_user = settings.TOOLCRIB_MAX_QUEUED_TURNS_PER_USER
    if counts["user"] >= per_user:
        raise TooManyTurns(
            _(
                "You already have %(per_user)s turns waiting or running; send your message when one has ended."
            )
            % {"per_user": per_user}
        )


@cache
def _lock_user() -> Prepared:
    """The user's row, locked against another turn's start: FOR NO KEY UPDATE on
    PostgreSQL, which a row naming the user (a stored event's sender, a Run) does
    not wait on. FOR UPDATE did: a turn's event write, holding its session's row,
    waited on this lock, while this transaction waited on the session's row."""
    users = get_user_model()
    return Prepared(
        users.objects.select_for_update(no_key=True)
        .filter(pk=Param("pk", users._meta.pk))
        .order_by("pk")[:1]
    )


@cache
def _lock_session() -> PreparedUpdate:
    """The UPDATE that locks an open session and names it, if it has no title."""
    field = Session._meta.get_field
    return PreparedUpdate(
        Session.objects.filter(pk=Param("pk", field("id")), closed_at__isnull=True),
        {
            "title": Case(
                When(title="", then=Param("title", field("title"))),
                default=F("title"),
            )
        },
    )


def _unfinished(*, session_id: str, user_id: int) -> dict[str, int]:
    """The session's and the user's queued or running turns, counted in one query."""
    statuses = [status.value for status in UNFINISHED]
    with connection.cursor() as cursor:
        cursor.execute(
            _unfinished_sql(connection.vendor),
            [session_id, user_id, session_id, user_id, *statuses],
        )
        per_session, per_user = cursor.fetchone()
    return {"session": per_session, "user": per_user}


@lru_cache(maxsize=4)
def _unfinished_sql(vendor: str) -> str:
    quote = connection.ops.quote_name
    session, user = quote("session_id"), quote("user_id")
    return (
        f"SELECT COUNT(CASE WHEN {session} = %s THEN 1 END),"
        f" COUNT(CASE WHEN {user} = %s THEN 1 END)"
        f" FROM {quote(Run._meta.db_table)}"
        f" WHERE ({session} = %s OR {user} = %s)"
        f" AND {quote('status')} IN ({', '.join(['%s'] * len(UNFINISHED))})"
    )


def start_function_response(
    *,
    session: Session,
    user,
    responses: Sequence[types.FunctionResponse],
    resumes_id: UUID | None = None,
) -> Run:
    """Record a queued Run whose message is function responses, and hand it over.

    ADK resumes the invocation that made the calls (found by their ids); the new
    Run names the run that made them (`resumes_id`). The caller checks the ids
    first: see agents.answers.answer.
    """
    if session.closed_at:
        raise SessionClosed()
    parts = [types.Part(function_response=response) for response in responses]
    message = types.Content(role="user", parts=parts)
    with transaction.atomic():
        run = Run.objects.create(
            session=session,
            user=user,
            message=message.model_dump(mode="json", exclude_none=True),
            resumes_id=resumes_id,
        )
        executors.submit(run_id=run.id)
    return run


def wait_for_run(*, run: Run, timeout: float) -> Run:
    """Block until the run has ended (or the timeout passes); return it fresh."""
    executors.wait(run_id=run.id, timeout=timeout)
    run.refresh_from_db()
    return run
