"""The audit of tool calls: who sees which calls, and how each status counts.

A call held for approval, refused by governance or served from the cache did not
run and did not fail; only `error` and `timeout` are failures. A call cut short by a
person's Stop (`cancelled`) neither ran to an end nor failed: it is counted apart. The groups below are
the one definition of what each status means: the Overview draws its charts in them
and the audit's status filter lists them (both read them over the API).
"""

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Q, QuerySet

from toolsets.models import ToolCall

Status = ToolCall.Status


@dataclass(frozen=True)
class OutcomeGroup:
    key: str
    label: str
    statuses: tuple[str, ...]


# In the order charts stack them and the audit's filter lists them.
GROUPS: tuple[OutcomeGroup, ...] = (
    OutcomeGroup("ok", "ran: ok", (Status.OK,)),
    OutcomeGroup("error", "ran: error", (Status.ERROR,)),
    OutcomeGroup("timeout", "ran: timed out", (Status.TIMEOUT,)),
    OutcomeGroup("cancelled", "stopped while running", (Status.CANCELLED,)),
    OutcomeGroup("denied", "denied by access", (Status.DENIED,)),
    OutcomeGroup(
        "refused",
        "refused by a policy or the agent",
        (
            Status.NOT_OFFERED,
            Status.GATED,
            Status.INACTIVE,
            Status.INVALID_ARGS,
            Status.RATE_LIMITED,
            Status.BUSY,
            Status.REFUSED,
            Status.UNREVIEWED,
        ),
    ),
    OutcomeGroup("cached", "answered from the cache", (Status.CACHED,)),
    OutcomeGroup(
        "held",
        "held for approval",
        (Status.AWAITING_APPROVAL, Status.APPROVED, Status.REJECTED, Status.EXPIRED),
    ),
)
RAN = frozenset({Status.OK, Status.ERROR, Status.TIMEOUT})
FAILED = frozenset({Status.ERROR, Status.TIMEOUT})
_GROUP_OF = {status: group.key for group in GROUPS for status in group.statuses}


def group_of(status: str) -> str:
    """The group a status is drawn in; an unknown status counts as refused."""
    return _GROUP_OF.get(status, "refused")


def visible_calls(*, user: AbstractBaseUser) -> QuerySet[ToolCall]:
    """The calls `user` may read: staff every user's, anyone else their own."""
    calls = ToolCall.objects.all()
    if user.is_staff:
        return calls
    return calls.filter(user_id=user.pk)


def older_than(
    calls: QuerySet[ToolCall], *, started_at: datetime, id: int
) -> QuerySet[ToolCall]:
    """`calls` after the call (`started_at`, `id`) in the audit's order (newest
    first, then the higher id; ToolCall.Meta.ordering): the next page of a list
    whose last row was that call, each call once however many share a started_at.

    The bound `started_at <=` lets an index whose last column is started_at
    (SQLite's carry the id after it) read the page from there down: no sort of
    every earlier row, however deep the page.
    """
    return calls.filter(
        Q(started_at__lt=started_at) | Q(started_at=started_at, id__lt=id),
        started_at__lte=started_at,
    )
