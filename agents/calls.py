"""Long-running calls: a tool's call that waits for a result someone posts later.

turns/drive.py records each call of a long-running tool as a LongRunningCall row, keyed
by its function-call id, before the call's event is published. The result comes:

- from a person, over the API (`POST /api/sessions/{id}/function-responses/`) or
  the session socket (a `function_response` frame): answer_call(), which checks
  who may answer;
- from trusted code (a Celery task, a service): complete_call(), which does not.

Either way one new Run resumes the invocation that made the call
(start.start_function_response), and a call is answered exactly once.

Who may answer: the session owner (or staff). A tool marked with
`answered_by(tool, group=...)` is answered by that group's members or staff, and
never by the user who made the request.
"""

from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from google.genai import types

from agents.models import LongRunningCall, Run, Session
from agents.sessions import access_session
from agents.turns import start
from project.errors import DomainError, ForbiddenError, NotFoundError


class CallNotFound(DomainError):
    field = "call_id"
    code = "unknown_call"

    def __init__(self) -> None:
        super().__init__("No long-running call with this id in this session.")


class CallAlreadyAnswered(DomainError):
    field = "call_id"
    code = "already_answered"

    def __init__(self) -> None:
        super().__init__("This call has already been answered.")


class CallNotYours(ForbiddenError):
    def __init__(self, group: str) -> None:
        super().__init__(
            f"Only members of {group!r} may answer this call, and not its requester."
        )


def may_answer(*, user, call: LongRunningCall) -> bool:
    """True if `user` may post this call's result."""
    owner_id = call.session.owner_id
    group = call.answered_by_group
    if not group:
        return user.is_staff or owner_id == user.pk
    if owner_id == user.pk:
        return False  # Nobody approves their own request.
    return user.is_staff or user.groups.filter(name=group).exists()


def access_call(*, user, session_id: str, call_id: str) -> LongRunningCall:
    """The call if `user` may answer it; else an error that reveals no more than needed.

    Raises:
        NotFoundError: Neither the session nor the call is the user's to see.
        CallNotFound: The user's session has no such call.
        CallNotYours: The user's session has the call, but someone else answers it.
    """
    call = (
        LongRunningCall.objects.select_related("session")
        .filter(session_id=session_id, call_id=call_id)
        .first()
    )
    if call is not None and may_answer(user=user, call=call):
        return call
    if not _sees_session(user, session_id):
        raise NotFoundError("No such session.")
    if call is None:
        raise CallNotFound()
    raise CallNotYours(call.answered_by_group)


def answer_call(
    *, user, session_id: str, call_id: str, response: Mapping[str, Any]
) -> Run:
    """Post a call's result as `user`; a Run resumes the invocation that made it."""
    with transaction.atomic():
        call = access_call(user=user, session_id=session_id, call_id=call_id)
        return _complete(call, response=response, user=user)


def complete_call(*, session_id: str, call_id: str, response: Mapping[str, Any]) -> Run:
    """Post a call's result from trusted code (a task, a service): no access check.

    The Run is the session owner's, as if the owner had posted it.
    """
    with transaction.atomic():
        call = (
            LongRunningCall.objects.select_related("session__owner")
            .filter(session_id=session_id, call_id=call_id)
            .first()
        )
        if call is None:
            raise CallNotFound()
        return _complete(call, response=response, user=call.session.owner)


def session_calls(*, session: Session) -> QuerySet[LongRunningCall]:
    """A session's long-running calls, newest first."""
    return LongRunningCall.objects.filter(session=session).select_related("session")


def answerable_calls(*, user) -> QuerySet[LongRunningCall]:
    """Pending calls `user` may answer: their own sessions', and their groups'."""
    own = Q(answered_by_group="", session__owner=user)
    if user.is_staff:
        as_member = ~Q(answered_by_group="")
    else:
        groups = list(user.groups.values_list("name", flat=True))
        as_member = Q(answered_by_group__in=groups)
    as_member &= ~Q(session__owner=user)
    return LongRunningCall.objects.filter(
        own | as_member, status=LongRunningCall.Status.PENDING
    ).select_related("session")


def has_pending_calls(*, session: Session) -> bool:
    """True while a long-running call of the session waits for its result."""
    return LongRunningCall.objects.filter(
        session=session, status=LongRunningCall.Status.PENDING
    ).exists()


def _complete(call: LongRunningCall, *, response: Mapping[str, Any], user) -> Run:
    locked = LongRunningCall.objects.select_for_update().get(pk=call.pk)
    if locked.status != LongRunningCall.Status.PENDING:
        raise CallAlreadyAnswered()
    answer = types.FunctionResponse(
        id=call.call_id, name=call.name, response=dict(response)
    )
    run = start.start_function_response(
        session=call.session, user=user, responses=[answer]
    )
    locked.status = LongRunningCall.Status.ANSWERED
    locked.response = dict(response)
    locked.answered_by = user
    locked.answer_run = run
    locked.answered_at = timezone.now()
    locked.save(
        update_fields=[
            "status",
            "response",
            "answered_by",
            "answer_run",
            "answered_at",
        ]
    )
    return run


def _sees_session(user, session_id: str) -> bool:
    try:
        access_session(user=user, session_id=session_id)
    except NotFoundError:
        return False
    return True
