"""The one rule of who may answer a request, as a filter and for one request.

- credential: only the session owner (a credential is personal: neither staff nor
  a group answers for someone);
- call or approval with no answer group: the session owner, or staff;
- with an answer group: that group's members, or staff, and never the requester
  (the session owner), staff or not, unless the catalog lets the requester
  decide her own calls of the tool (`self_approval`);
- never the requester where the request needs several people's approvals (the
  two-person rule, quorum.py), whatever `self_approval` says.

An inbox holds exactly what the user may answer: their own requests, their
groups', and, for staff, every user's call or approval (grouped or not).

Whoever may answer a request may see it, and so may the session owner: the
requester sees her request that a group decides. Whoever may answer it, and its
requester, hear of its changes (audience()).

A request with no session (an MCP gateway call's approval) has its `caller` for
requester, under the same rule: where the rule says "the session owner", read
"the requester".
"""

from dataclasses import dataclass

from django.db.models import Q

from agents.models import Request

CREDENTIAL = Request.Kind.CREDENTIAL


@dataclass(frozen=True)
class Audience:
    """Who hears of a change to a request: its requester and who may answer it."""

    owner_id: int | None
    group: str  # the answer group, whose members may answer it ("": none)
    staff: bool  # whether staff may answer it


def asked_by(user) -> Q:
    """The requests `user` asked: of her sessions, or her gateway calls."""
    return Q(session__owner=user) | Q(session__isnull=True, caller=user)


def addressed_to(user) -> Q:
    """The requests `user` may answer: their inbox (the rule, as a filter)."""
    owner = asked_by(user)
    ungrouped = Q(answer_group="")
    alone = Q(approvals_required__lte=1)  # else never the requester (quorum.py)
    if user.is_staff:
        as_answerer = (ungrouped & alone) | ~owner
    else:
        member = Q(answer_group__in=user.groups.values("name"))
        as_answerer = (ungrouped & owner & alone) | (~owner & member)
    self_approved = owner & alone & Q(self_approval=True)
    credential = Q(kind=CREDENTIAL)
    return (credential & owner) | (~credential & (as_answerer | self_approved))


def visible_to(user) -> Q:
    """The requests `user` may see: addressed to them, or of their own sessions."""
    return asked_by(user) | addressed_to(user)


def may_answer(*, user, request: Request) -> bool:
    """True if `user` may answer `request` (the rule, for one request)."""
    is_owner = request.requester_id == user.pk
    if request.kind == CREDENTIAL:
        return is_owner
    if is_owner and request.approvals_required > 1:
        return False  # The two-person rule: never the requester.
    group = request.answer_group
    if not group:
        return is_owner or user.is_staff
    if is_owner:
        return request.self_approval  # Else nobody answers their own request.
    return user.is_staff or user.groups.filter(name=group).exists()


def may_see(*, user, request: Request) -> bool:
    """True if `user` may see `request`: its session's owner, or whoever may answer it."""
    return request.requester_id == user.pk or may_answer(user=user, request=request)


def may_remember(*, user, request: Request) -> bool:
    """True if `user` may approve `request` and every later call of its tool in its
    session ("always allow for me"): its requester, where the catalog lets her."""
    return (
        request.kind == Request.Kind.APPROVAL
        and request.self_approval
        and request.approvals_required <= 1
        and request.session_id is not None
        and request.session.owner_id == user.pk
    )


def audience(request: Request) -> Audience:
    """Who may answer `request` besides its requester, and the requester."""
    owner_id = request.requester_id
    if request.kind == CREDENTIAL:
        return Audience(owner_id=owner_id, group="", staff=False)
    return Audience(owner_id=owner_id, group=request.answer_group, staff=True)
