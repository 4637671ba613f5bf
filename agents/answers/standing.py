"""Standing approvals: "always allow for me", for one tool in one session.

Where the catalog lets a requester decide her own calls of a tool
(`Tool.requester_may_approve`, carried in the approval's payload and recorded as
`Request.self_approval`), she may approve one with `remember`: a StandingApproval
is stored (kinds.ApprovalKind), and every later approval of that tool in that
session is approved at once when recorded, by this sweep, which the recorder
schedules by name (record.APPROVE_STANDING): in her name, with a comment saying
so. If the catalog withdraws its permission, later requests are asked again.
"""

from django.db.models import Exists, OuterRef

from agents.answers import answer
from agents.models import Request, StandingApproval
from agents.requests.kinds import APPROVAL
from project.errors import DomainError


def approve_standing() -> int:
    """Approve every pending approval that a standing approval covers.

    Returns:
        How many were approved.
    """
    covered = StandingApproval.objects.filter(
        session_id=OuterRef("session_id"), tool_name=OuterRef("tool_name")
    )
    due = (
        Request.objects.filter(
            kind=Request.Kind.APPROVAL,
            status=Request.Status.PENDING,
            self_approval=True,
            approvals_required__lte=1,  # the two-person rule: never the requester
        )
        .filter(Exists(covered))
        .select_related("session__owner")
    )
    return sum(_approve(request) for request in list(due))


def standing_comment(request: Request) -> str:
    owner = request.session.owner.get_username()
    return (
        f"Approved at once: {owner} always allows {request.tool_name} in this session."
    )


def _approve(request: Request) -> bool:
    try:
        answer.answer_request(
            user=request.session.owner,
            kind=APPROVAL,
            request_id=request.pk,
            answer={"approved": True, "comment": standing_comment(request)},
        )
    except DomainError:  # Answered meanwhile, expired, or its session closed.
        return False
    return True
