"""The two-person rule: an approval that needs several people's approvals.

A request records how many approvals it needs (`approvals_required`, from the
catalog's tool through the confirmation's payload, or from the gateway's held
call). Each approval by a person who may answer it is a RequestApproval row:
never by its requester (even where the catalog lets her decide her own calls),
each person once. Until the count is reached the request stays pending, and
every inbox that hears of it is rung (`approval`), so each sees who approved so
far; the approval that completes it decides it, as a single approval does. One
rejection ends it, whatever approvals came before.
"""

from agents.models import Request, RequestApproval
from agents.requests.errors import ApprovedAlready, RequesterMayNotApprove


def count(request: Request) -> int:
    """How many people approved `request` so far."""
    return RequestApproval.objects.filter(request=request).count()


def approve(locked: Request, *, user, comment: str) -> bool:
    """Record `user`'s approval of the locked, pending request; True if that
    completes it (or it needs one approval only).

    Raises:
        RequesterMayNotApprove: `user` asked it, and it needs several approvals.
        ApprovedAlready: `user` approved it before.
    """
    needed = locked.approvals_required
    if needed <= 1:
        return True
    if user is None or user.pk == locked.requester_id:
        raise RequesterMayNotApprove(needed)
    if RequestApproval.objects.filter(request=locked, approver=user).exists():
        raise ApprovedAlready()
    RequestApproval.objects.create(request=locked, approver=user, comment=comment)
    return count(locked) >= needed


def approvers(request: Request) -> list[RequestApproval]:
    """Who approved `request` so far, first first, with their comments."""
    return list(
        RequestApproval.objects.filter(request=request).select_related("approver")
    )
