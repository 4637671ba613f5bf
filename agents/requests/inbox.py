"""What a user sees of requests: their inbox, their own requests, a session's, one.

The inbox (inbox_of, requests_of, readable) holds every request, a gateway call's
approval (no session) too; the older listings by kind hold a session's only.

Reading changes nothing: no listing expires a request (the sweep does, on time).
"""

from django.db.models import (
    BooleanField,
    ExpressionWrapper,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
)
from django.utils.translation import gettext as _

from agents.models import Request, RequestApproval, Run, Session
from agents.params import BadParameter, parse_whole_number
from agents.requests import rules
from agents.requests.errors import RequestNotFound
from agents.requests.kinds import CALL, RequestKind

PENDING = Request.Status.PENDING
# Every status, in the listings' `status` filter.
ANY_STATUS = "all"
STATUSES = (PENDING, ANY_STATUS, *(s for s in Request.Status if s != PENDING))


def inbox_of(*, user, status: str = PENDING) -> QuerySet[Request]:
    """What `user` may answer, of every kind, newest first: pending ones (in a
    session still open, where an answer can go) wait on them.

    `status` is one of STATUSES ("all": any)."""
    rows = _for(user).filter(rules.addressed_to(user))
    if status == PENDING:
        rows = rows.filter(session__closed_at__isnull=True)
    return _with_status(rows, status)


def requests_of(*, user, status: str = PENDING) -> QuerySet[Request]:
    """What `user` asked (her sessions' requests) that waits on others, or was
    answered; a pending one she may answer herself is in her inbox instead."""
    waits_on_her = Q(status=PENDING) & rules.addressed_to(user)
    rows = _for(user).filter(rules.asked_by(user)).exclude(waits_on_her)
    return _with_status(rows, status)


def count_waiting(*, user) -> int:
    """How many pending requests wait on `user`'s answer (the inbox's badge): not
    those she approved already, which wait for another person (quorum.py)."""
    return inbox_of(user=user).exclude(approvals__approver=user).count()


def readable(*, user, request_id) -> Request:
    """One request of any kind that `user` may see; RequestNotFound otherwise."""
    try:
        pk = parse_whole_number(str(request_id), name="id", minimum=1)
    except BadParameter:
        raise RequestNotFound(_("request")) from None
    request = _for(user).filter(pk=pk).first()
    if request is None or not rules.may_see(user=user, request=request):
        raise RequestNotFound(_("request"))
    return request


def addressed(*, user, kind: RequestKind) -> QuerySet[Request]:
    """Requests of `kind` `user` may answer, in any status."""
    return _of(kind).filter(rules.addressed_to(user))


def answerable(*, user, kind: RequestKind) -> QuerySet[Request]:
    """Pending requests of `kind` addressed to `user`: what waits for their answer."""
    return addressed(user=user, kind=kind).filter(status=PENDING)


def visible(*, user, kind: RequestKind) -> QuerySet[Request]:
    """Requests of `kind` `user` may see: addressed to them, or of their sessions."""
    return _of(kind).filter(rules.visible_to(user))


def session_requests(*, session: Session, kind: RequestKind) -> QuerySet[Request]:
    """One session's requests of `kind`, newest first (the caller may see the session)."""
    return _of(kind).filter(session=session)


def readable_request(*, user, kind: RequestKind, request_id) -> Request:
    """One request of `kind` that `user` may see; the kind's refusal otherwise."""
    request = _of(kind).filter(pk=request_pk(kind, request_id)).first()
    if request is None or not rules.may_see(user=user, request=request):
        raise kind.not_found()
    return request


def request_pk(kind: RequestKind, request_id) -> int:
    """A request's id as typed (a URL's, a frame's); the kind's refusal if it is none."""
    try:
        return parse_whole_number(str(request_id), name="id", minimum=1)
    except BadParameter:
        raise kind.not_found() from None


def has_pending_calls(*, session: Session) -> bool:
    """True while a long-running call of the session waits for its result."""
    return Request.objects.filter(
        session=session, kind=CALL.kind, status=PENDING
    ).exists()


def _of(kind: RequestKind) -> QuerySet[Request]:
    # The older listings by kind are a session's: a gateway call's approval (no
    # session) is in the inbox (inbox_of, readable) only.
    # Newest first by id, the order the index request_kind_newest holds them in
    # (ids are given as requests are made), as the inbox's own listings read.
    return (
        Request.objects.filter(kind=kind.kind, session__isnull=False)
        .select_related("session", "answered_by")
        .order_by("-id")
    )


_approvals = RequestApproval.objects.select_related("approver").order_by("id")


def _for(user) -> QuerySet[Request]:
    """Every request, with what a person reads of it, and whether `user` may
    answer each (`user_may_answer`: the rule, in the same query)."""
    first_message = (
        Run.objects.filter(session=OuterRef("session_id"))
        .exclude(text="")
        .order_by("created_at")
        .values("text")[:1]
    )
    return (
        Request.objects.select_related(
            "session__owner", "caller", "answered_by", "args_edited_by"
        )
        .prefetch_related(Prefetch("approvals", queryset=_approvals))
        .annotate(
            first_message=Subquery(first_message),
            user_may_answer=ExpressionWrapper(
                rules.addressed_to(user), output_field=BooleanField()
            ),
        )
        .order_by("-id")
    )


def _with_status(rows: QuerySet[Request], status: str) -> QuerySet[Request]:
    return rows if status == ANY_STATUS else rows.filter(status=status)
