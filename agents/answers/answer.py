"""The one answer path: a person's (or trusted code's) answer resumes the agent.

Every answer, whatever its kind and wherever it comes from (REST, the session
socket, a Celery task), goes the same way: lock the request, refuse it unless it
is pending, turn the answer into the kind's FunctionResponse, start a Run that
resumes the invocation (turns.start.start_function_response), and store who
answered, when, and that Run. A request is answered exactly once.

A request past its time is expired first (the agent is told, as the sweep would
tell it), and the late answer refused. Every answer and expiry rings the inboxes
of who hears of the request (agents.requests.rings) once it commits.

The inbox names a request by its id alone, whatever its kind (answer_by_id): a
request answered, decided or expired before is refused there with 409
(RequestClosed), where the older paths by kind keep their 400.

A gateway call's approval (a request with no session) has no agent to resume: its
answer or expiry is stored, signalled and rung the same way, and starts no Run
(None); the MCP gateway, told by the ring, runs the held call or says why not.
Only the inbox's path (answer_by_id) reaches it: the older paths by kind name a
session's requests.

An approval may change the call's arguments (edits.py), answer with a text in
the tool's place (a rejection's `response`), or count as one of several people's
approvals (quorum.py): the request then stays pending, and nothing resumes.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Case, Q, QuerySet, When
from django.utils import timezone
from django.utils.translation import gettext as _

from agents.models import Request, Run, Session
from agents.requests import inbox, rings, rules
from agents.requests.closing import store_end
from agents.requests.errors import AlreadyAnswered, NotYours, RequestClosed
from agents.requests.inbox import request_pk
from agents.requests.kinds import APPROVAL, CALL, Reply, RequestKind, kind_of
from agents.sessions import access_session
from agents.turns import start
from project.errors import DomainError, NotFoundError


def answer_request(
    *,
    user,
    kind: RequestKind,
    answer: Mapping[str, Any],
    request_id: int | str | None = None,
    session_id: str | None = None,
    call_id: str | None = None,
) -> Run | None:
    """Answer one pending request of `kind` as `user`; a Run resumes its agent.

    The request is named by its id (within `session_id`, if given), or by its
    call's id within `session_id`.

    Raises:
        NotFoundError: The user may not see the request (or its session).
        UnknownCall: The user's session has no such long-running call.
        NotYours: The user sees the request, but someone else answers it.
        AlreadyAnswered: It was answered, decided or expired before.
        MissingCredentialField: A credential answer lacks what its scheme needs.
    """
    request = access_request(
        user=user,
        kind=kind,
        request_id=request_id,
        session_id=session_id,
        call_id=call_id,
    )
    expire(request_id=request.pk)
    return _answer(request.pk, kind, user=user, answer=answer)


def answer_by_id(
    *,
    user,
    request_id: int | str,
    answer: Mapping[str, Any],
    kind: RequestKind | None = None,
) -> Run | None:
    """Answer the pending request `request_id` (of `kind`, if given) as `user`.

    The inbox's path: the answer is in the shape of the request's kind (see
    access_by_id to learn it first). Returns the Run that resumes its agent, or
    None for a gateway call's approval (no agent waits: the gateway does).

    Raises:
        NotFoundError: The user may not see the request, or it is of another kind.
        NotYours: The user sees the request, but someone else answers it.
        RequestClosed: It was answered, decided or expired before (409).
        SessionClosed: Its session is closed: nobody can be told.
        CannotRemember: `remember` where the requester may not decide it herself.
        MissingCredentialField: A credential answer lacks what its scheme needs.
    """
    request = access_by_id(user=user, request_id=request_id, kind=kind)
    found = kind_of(request)
    expire(request_id=request.pk)
    try:
        return _answer(request.pk, found, user=user, answer=answer)
    except AlreadyAnswered:
        raise _closed(request.pk, found) from None


@dataclass(frozen=True)
class Decided:
    """What one decision of many did (decide_many): the request as it is after
    it, or why it was refused (`error`: a domain error, nothing changed)."""

    request_id: int
    request: Request | None = None
    run: Run | None = None
    error: DomainError | None = None


MAX_AT_ONCE = 100


def decide_many(
    *, user, request_ids: Sequence[int], approved: bool, comment: str = ""
) -> list[Decided]:
    """Approve or reject each approval of `request_ids` as `user`, with one comment.

    Each goes the one answer path on its own (answer_by_id), in its own
    transaction, audited and rung on its own: one refused (decided before,
    someone else's to decide, approved by her already, not found) changes
    nothing of it and does not stop the others. In the order given, each id once.
    """
    answer = {"approved": approved, "comment": comment}
    decided = []
    for request_id in dict.fromkeys(request_ids):
        try:
            run = answer_by_id(
                user=user, request_id=request_id, answer=answer, kind=APPROVAL
            )
        except DomainError as exc:
            decided.append(Decided(request_id, error=exc))
            continue
        row = Request.objects.select_related("answered_by").get(pk=request_id)
        decided.append(Decided(request_id, request=row, run=run))
    return decided


def access_by_id(
    *, user, request_id: int | str, kind: RequestKind | None = None
) -> Request:
    """The request `request_id` (of `kind`, if given) if `user` may answer it; else a
    refusal that reveals no more than the user may see."""
    request = inbox.readable(user=user, request_id=request_id)
    if kind is not None and request.kind != kind.kind:
        raise kind.not_found()
    if not rules.may_answer(user=user, request=request):
        found = kind_of(request)
        raise NotYours(verb=found.verb, noun=found.noun, group=request.answer_group)
    return request


def complete_call(*, session_id: str, call_id: str, response: Mapping[str, Any]) -> Run:
    """Post a long-running call's result from trusted code (a task, a service).

    No access check: the Run is the session owner's, as if the owner had posted it.
    """
    request = by_call_id(
        Request.objects.select_related("session__owner").filter(
            kind=CALL.kind, session_id=session_id
        ),
        call_id,
    )
    if request is None:
        raise CALL.not_found()
    expire(request_id=request.pk)
    return _answer(request.pk, CALL, user=request.session.owner, answer=response)


def access_request(
    *,
    user,
    kind: RequestKind,
    request_id: int | str | None = None,
    session_id: str | None = None,
    call_id: str | None = None,
) -> Request:
    """The request if `user` may answer it; else a refusal that reveals no more
    than the user may see."""
    found = Request.objects.select_related("session").filter(
        kind=kind.kind, session__isnull=False
    )
    if session_id is not None:
        found = found.filter(session_id=session_id)
    if call_id is not None:
        request = by_call_id(found, call_id)
    else:
        request = found.filter(pk=request_pk(kind, request_id)).first()
    if request is not None and rules.may_answer(user=user, request=request):
        return request
    if request is not None and rules.may_see(user=user, request=request):
        raise NotYours(verb=kind.verb, noun=kind.noun, group=request.answer_group)
    if session_id is not None and not _sees_session(user, session_id):
        raise NotFoundError(_("No such session."))
    raise kind.not_found()


def by_call_id(found: QuerySet[Request], call_id: str) -> Request | None:
    """The request of these that a call id names: its own, or the one ADK asked
    again under that id (a workflow's RequestInput asks under a fixed id: record.py
    keeps each ask, the later ones under their own call_id); a pending one first,
    else the latest."""
    asked_again = Q(kind=Request.Kind.CALL, tool_call_id=call_id)
    named = found.filter(Q(call_id=call_id) | asked_again)
    pending_first = Case(When(status=Request.Status.PENDING, then=0), default=1)
    return named.order_by(pending_first, "-created_at", "-pk").first()


def expire(*, request_id: int) -> bool:
    """Answer a pending request as expired if its time is up; True if it was.

    The agent is told (the kind's expired answer, in a Run of the session owner's);
    in a closed session nobody is left to tell, and the request only expires.
    """
    with transaction.atomic():
        locked = Request.objects.select_for_update().filter(pk=request_id).first()
        if locked is None or not _is_due(locked):
            return False
        reply = kind_of(locked).expired(locked)
        try:
            with transaction.atomic():
                _resume(locked, reply, user=None)
        except DomainError:  # A closed session: nobody is left to tell.
            store_end(locked, reply, user=None, run=None)
        return True


def _answer(
    pk: int, kind: RequestKind, *, user, answer: Mapping[str, Any]
) -> Run | None:
    """Lock the request, check it is pending, and resume its agent with the answer."""
    with transaction.atomic():
        locked = Request.objects.select_for_update().get(pk=pk)
        if locked.status != Request.Status.PENDING:
            raise kind.already_answered()
        session = _session_of(locked) if locked.session_id else None
        reply = kind.reply(locked, answer, session=session, user=user)
        if reply.pending:
            _store_approval(locked)
            return None
        return _resume(locked, reply, user=user, session=session)


def _resume(
    locked: Request, reply: Reply, *, user, session: Session | None = None
) -> Run | None:
    """Start the Run that resumes the invocation, then store the answer.

    A gateway call's approval has no invocation: the answer is only stored."""
    if locked.session_id is None:
        store_end(locked, reply, user=user, run=None)
        return None
    session = session or _session_of(locked)
    run = start.start_function_response(
        session=session,
        user=user or session.owner,
        responses=[reply.response],
        resumes_id=locked.run_id,
    )
    store_end(locked, reply, user=user, run=run)
    return run


def _store_approval(locked: Request) -> None:
    """One approval of several (quorum.py): the request still waits, and every
    inbox that hears of it learns who approved so far."""
    locked.save(update_fields=["approved_args", "args_edited_by"])
    rings.ring_on_commit(locked, rings.APPROVAL)


def _closed(pk: int, kind: RequestKind) -> RequestClosed:
    """The refusal of an answer to a request that is no longer pending."""
    status = Request.objects.filter(pk=pk).values_list("status", flat=True).first()
    if status == Request.Status.EXPIRED:
        return RequestClosed(
            code="expired",
            message=f"This {kind.noun} expired: nobody answered in time.",
        )
    return RequestClosed(code=kind.answered_code, message=kind.answered_message)


def _session_of(request: Request) -> Session:
    return Session.objects.select_related("owner").get(pk=request.session_id)


def _is_due(request: Request) -> bool:
    return (
        request.status == Request.Status.PENDING
        and request.expires_at is not None
        and request.expires_at <= timezone.now()
    )


def _sees_session(user, session_id: str) -> bool:
    try:
        access_session(user=user, session_id=session_id)
    except NotFoundError:
        return False
    return True
