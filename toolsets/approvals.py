"""Human approval: ADK's tool confirmation, kept as Approval rows and decided over the API.

A tool built with `FunctionTool(func, require_confirmation=True)` (or one that calls
`tool_context.request_confirmation(...)`) does not run at first: ADK emits an
`adk_request_confirmation` long-running call (an `approval_request` event) and the
invocation pauses. turns/drive.py records that call here as an Approval (record_approvals),
before the event is published, keyed by the confirmation call's id.

A decision (decide()) is that call's FunctionResponse `{"confirmed": bool}`, posted
as a new Run: ADK, reading the session back from the database, finds the original
call and runs the tool (approved) or answers it with its rejection. Nothing lives
in memory between the request and the decision, so it survives a restart.

A tool marked with `approval_timeout(tool, seconds=...)` expires: once the time has
passed, the approval is rejected as `expired` (expire_due(), run when approvals are
listed or decided, on a timer set for each approval, and when a worker starts) and
the agent gets ADK's rejection.

Who decides: the session owner (or staff). A tool marked with
`answered_by(tool, group=...)` is decided by that group's members (or staff), and
never by the user who made the request.

An administrator can also mark a tool in the catalog (Tool.requires_approval, with
an optional approver group and timeout): GovernancePlugin then asks through
acatalog_gate() for a tool whose code asks nothing, the same ADK confirmation, so
the request, the decision and the resumed call are exactly the ones above.
"""

import asyncio
from datetime import timedelta

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from google.adk.agents import BaseAgent
from google.adk.events import Event as AdkEvent
from google.genai import types

from agents.adk.long_running import approval_rule, approval_timeout  # noqa: F401
from agents.models import Run, Session
from agents.turns import timers
from project.errors import DomainError, ForbiddenError, NotFoundError
from toolsets.models import Approval

CONFIRMATION_CALL = "adk_request_confirmation"


class ApprovalAlreadyDecided(DomainError):
    field = "approved"
    code = "already_decided"

    def __init__(self) -> None:
        super().__init__("This approval has already been decided.")


class ApprovalNotYours(ForbiddenError):
    def __init__(self, group: str) -> None:
        super().__init__(
            f"Only members of {group!r} may decide this approval, and not its requester."
        )


def confirmation_requests(event: AdkEvent) -> list[types.FunctionCall]:
    """The `adk_request_confirmation` calls of a (complete) event."""
    if event.partial:
        return []
    return [c for c in event.get_function_calls() if c.name == CONFIRMATION_CALL]


async def record_approvals(run: Run, event: AdkEvent, root: BaseAgent) -> None:
    """One pending Approval per confirmation request of the event."""
    rows = []
    for call in confirmation_requests(event):
        args = dict(call.args or {})
        original = args.get("originalFunctionCall") or {}
        confirmation = args.get("toolConfirmation") or {}
        name = str(original.get("name") or "")
        group, timeout = approval_rule(
            root,
            author=event.author,
            tool_name=name,
            payload=dict(confirmation.get("payload") or {}),
        )
        rows.append(
            Approval(
                session_id=run.session_id,
                owner_id=run.session.owner_id,
                run_id=run.pk,
                invocation_id=event.invocation_id or "",
                agent=event.author or "",
                call_id=call.id or "",
                tool_call_id=str(original.get("id") or ""),
                tool_name=name,
                args=dict(original.get("args") or {}),
                hint=str(confirmation.get("hint") or ""),
                approver_group=group,
                expires_at=_expiry(timeout),
            )
        )
    if rows:
        await Approval.objects.abulk_create(rows, ignore_conflicts=True)
    for when in sorted({row.expires_at for row in rows if row.expires_at}):
        await asyncio.to_thread(_expire_at, when)


def _expire_at(when) -> None:
    """Sweep when an approval's time is up, so its agent is told without anyone
    listing approvals (a little after, so the row is due when the sweep runs)."""
    from toolsets.tasks import expire_approvals_task  # tasks imports this module.

    delay = max((when - timezone.now()).total_seconds(), 0) + 0.2
    timers.later(delay, expire_approvals_task)


def _expiry(timeout: float | None):
    return None if timeout is None else timezone.now() + timedelta(seconds=timeout)


def may_decide(*, user, approval: Approval) -> bool:
    group = approval.approver_group
    if not group:
        return user.is_staff or approval.owner_id == user.pk
    if approval.owner_id == user.pk:
        return False  # Nobody approves their own request.
    return user.is_staff or user.groups.filter(name=group).exists()


def visible_approvals(*, user) -> QuerySet[Approval]:
    """Approvals `user` may decide (or has to see): their own, and their groups'."""
    own = Q(approver_group="", owner=user)
    if user.is_staff:
        as_member = ~Q(approver_group="")
    else:
        groups = list(user.groups.values_list("name", flat=True))
        as_member = Q(approver_group__in=groups)
    as_member &= ~Q(owner=user)
    return Approval.objects.filter(own | as_member).select_related("decided_by")


def session_approvals(*, user, session_id: str) -> QuerySet[Approval]:
    """One session's approvals `user` may see: those they may decide, and, for the
    session's owner, their own requests that wait for an approver group."""
    own_requests = Q(owner=user)
    return (
        Approval.objects.filter(session_id=session_id)
        .filter(own_requests | Q(pk__in=visible_approvals(user=user).values("pk")))
        .select_related("decided_by")
    )


def readable_approval(*, user, approval_id) -> Approval:
    """An approval `user` may decide, or their own request (which an approver
    group decides); 404 otherwise."""
    if str(approval_id).isdigit():
        approval = Approval.objects.filter(pk=int(approval_id)).first()
        if approval is not None and (
            approval.owner_id == user.pk or may_decide(user=user, approval=approval)
        ):
            return approval
    raise NotFoundError("No such approval.")


def access_approval(*, user, approval_id) -> Approval:
    """The approval if `user` may decide it; 404 if they may not even see it."""
    if not str(approval_id).isdigit():
        raise NotFoundError("No such approval.")
    approval = Approval.objects.filter(pk=int(approval_id)).first()
    if approval is None:
        raise NotFoundError("No such approval.")
    if may_decide(user=user, approval=approval):
        return approval
    if approval.owner_id == user.pk:
        raise ApprovalNotYours(approval.approver_group)
    raise NotFoundError("No such approval.")


def decide(*, user, approval_id, approved: bool) -> Run:
    """Approve or reject as `user`; a Run resumes the paused invocation."""
    expire_due()
    with transaction.atomic():
        approval = access_approval(user=user, approval_id=approval_id)
        locked = Approval.objects.select_for_update().get(pk=approval.pk)
        if locked.status != Approval.Status.PENDING:
            raise ApprovalAlreadyDecided()
        status = Approval.Status.APPROVED if approved else Approval.Status.REJECTED
        return _resume(locked, user=user, status=status)


def expire_due() -> int:
    """Reject every pending approval past its expiry; the agents are told. Returns how many."""
    expired = 0
    due = Approval.objects.filter(
        status=Approval.Status.PENDING, expires_at__lte=timezone.now()
    ).values_list("pk", flat=True)
    for pk in list(due):
        with transaction.atomic():
            locked = Approval.objects.select_for_update().get(pk=pk)
            if locked.status != Approval.Status.PENDING:
                continue
            try:
                _resume(locked, user=None, status=Approval.Status.EXPIRED)
            except DomainError:  # A closed session: nobody is left to tell.
                locked.status = Approval.Status.EXPIRED
                locked.decided_at = timezone.now()
                locked.save(update_fields=["status", "decided_at"])
            expired += 1
    return expired


def _resume(locked: Approval, *, user, status: str) -> Run:
    """Answer the confirmation call (confirmed only if approved) and store the decision."""
    from agents.turns import start  # start -> executors -> drive imports this module.

    session = Session.objects.select_related("owner").get(pk=locked.session_id)
    answer = types.FunctionResponse(
        id=locked.call_id,
        name=CONFIRMATION_CALL,
        response={"confirmed": status == Approval.Status.APPROVED},
    )
    run = start.start_function_response(
        session=session, user=user or session.owner, responses=[answer]
    )
    locked.status = status
    locked.decided_by = user
    locked.decided_at = timezone.now()
    locked.answer_run_id = run.pk
    locked.save(update_fields=["status", "decided_by", "decided_at", "answer_run_id"])
    return run


def decide_in_session(*, user, session_id: str, approval_id, approved: bool) -> Run:
    """decide(), for a socket of one session: the approval must belong to it."""
    found = Approval.objects.filter(pk=approval_id, session_id=session_id)
    if not found.exists():
        raise NotFoundError("No such approval.")
    return decide(user=user, approval_id=approval_id, approved=approved)
