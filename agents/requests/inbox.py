"""What a user sees of requests: their inbox, a session's requests, one request.

Reading changes nothing: no listing expires a request (the sweep does, on time).
"""

from django.db.models import QuerySet

from agents.models import Request, Session
from agents.params import BadParameter, parse_whole_number
from agents.requests import rules
from agents.requests.kinds import CALL, RequestKind


def addressed(*, user, kind: RequestKind) -> QuerySet[Request]:
    """Requests of `kind` addressed to `user`: their own, and their groups'."""
    return _of(kind).filter(rules.addressed_to(user))


def answerable(*, user, kind: RequestKind) -> QuerySet[Request]:
    """Pending requests of `kind` addressed to `user`: what waits for their answer."""
    return addressed(user=user, kind=kind).filter(status=Request.Status.PENDING)


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
        session=session, kind=CALL.kind, status=Request.Status.PENDING
    ).exists()


def _of(kind: RequestKind) -> QuerySet[Request]:
    return Request.objects.filter(kind=kind.kind).select_related(
        "session", "answered_by"
    )
