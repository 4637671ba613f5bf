"""The one rule of who may answer a request, as a filter and for one request.

- credential: only the session owner (a credential is personal: neither staff nor
  a group answers for someone);
- call or approval with no answer group: the session owner, or staff;
- with an answer group: that group's members, or staff, and never the requester
  (the session owner), staff or not.

An inbox holds what is addressed to the user: their own requests with no group,
and their groups' requests (staff: every group's). Staff may also answer another
user's call or approval with no group, from that session; it is not in their
inbox, which would otherwise hold every user's.

Whoever may answer a request may see it, and so may the session owner: the
requester sees her request that a group decides.
"""

from django.db.models import Q

from agents.models import Request

CREDENTIAL = Request.Kind.CREDENTIAL


def addressed_to(user) -> Q:
    """The requests addressed to `user`: their inbox (the rule, as a filter)."""
    owner = Q(session__owner=user)
    own = owner & Q(answer_group="")
    if user.is_staff:
        as_approver = ~Q(answer_group="")
    else:
        as_approver = Q(answer_group__in=user.groups.values("name"))
    return own | (as_approver & ~owner & ~Q(kind=CREDENTIAL))


def visible_to(user) -> Q:
    """The requests `user` may see: addressed to them, or of their own sessions."""
    return Q(session__owner=user) | addressed_to(user)


def may_answer(*, user, request: Request) -> bool:
    """True if `user` may answer `request` (the rule, for one request)."""
    is_owner = request.session.owner_id == user.pk
    if request.kind == CREDENTIAL:
        return is_owner
    group = request.answer_group
    if not group:
        return is_owner or user.is_staff
    if is_owner:
        return False  # Nobody answers their own request.
    return user.is_staff or user.groups.filter(name=group).exists()


def may_see(*, user, request: Request) -> bool:
    """True if `user` may see `request`: its session's owner, or whoever may answer it."""
    return request.session.owner_id == user.pk or may_answer(user=user, request=request)
