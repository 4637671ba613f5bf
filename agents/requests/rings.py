"""The inbox's doorbell: a request was recorded, approved by one of several
people, answered or expired.

One group send per change and group of who hears of it (rules.audience): its
requester's inbox, its answer group's, and staff's where staff may answer it;
never one send per user. The frame names the request and nothing more: a socket
refetches what it shows. Rung once the change is committed (the database is the
log): by the recorder after its rows are stored, by the answer path on commit.
"""

from collections.abc import Iterable
from typing import Literal

from asgiref.sync import async_to_sync
from django.db import transaction
from pydantic import BaseModel
from pydantic.json_schema import SkipJsonSchema

from agents.doorbell import streams
from agents.models import Request
from agents.requests import quorum, rules

NEW = "new"
ANSWERED = "answered"
EXPIRED = "expired"
# One person's approval of a request that needs several (quorum.py): still pending.
APPROVAL = "approval"


class RequestFrame(BaseModel):
    """A request you may answer, or made, changed: refetch what you show of it.

    A doorbell: it names the request, and says nothing a listing would not."""

    type: Literal["request"] = "request"
    event: Literal["new", "approval", "answered", "expired"]
    id: int
    kind: Literal["call", "approval", "credential"]
    status: Literal["pending", "answered", "approved", "rejected", "expired"]
    # `approval` (one person's approval of several, the two-person rule): how
    # many approved so far, and how many it needs.
    approvals: int | SkipJsonSchema[None] = None
    approvals_required: int | SkipJsonSchema[None] = None


def groups_of(request: Request) -> list[str]:
    """The inbox groups that hear of `request`'s changes (its session is loaded)."""
    audience = rules.audience(request)
    groups = []
    if audience.owner_id is not None:
        groups.append(streams.inbox_user_group(audience.owner_id))
    if audience.group:
        groups.append(streams.inbox_group_group(audience.group))
    if audience.staff:
        groups.append(streams.inbox_staff_group())
    return groups


def frame_of(request: Request, event: str) -> dict:
    frame = RequestFrame(
        event=event, id=request.pk, kind=request.kind, status=request.status
    )
    if event == APPROVAL:
        frame.approvals = quorum.count(request)
        frame.approvals_required = request.approvals_required
    return frame.model_dump(exclude_none=True)


async def aring(requests: Iterable[Request], event: str) -> None:
    """Ring for each of `requests`, stored and committed already."""
    for request in requests:
        await streams.apublish_inbox(groups_of(request), frame_of(request, event))


def ring_on_commit(request: Request, event: str) -> None:
    """Ring for `request` once the transaction that changes it commits."""
    groups, frame = groups_of(request), frame_of(request, event)
    transaction.on_commit(
        lambda: async_to_sync(streams.apublish_inbox)(groups, frame), robust=True
    )
