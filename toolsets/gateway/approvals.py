"""A gateway call held for a person's approval: recorded, waited for, run once.

A call that governance holds (the catalog's approval gate, a grant's
`otherwise: approval`, or the tool's own confirmation) becomes a pending approval
Request with no session (agents.requests.record.arecord_gateway_approval): its
caller asked it through the client; who may decide it is the one rule
(agents.requests.rules), by the catalog's approver group; it expires by the
catalog's timeout; it is in the approvers' inbox, and answered on the one answer
path (agents.answers.answer), which starts no Run for it.

The call's handler waits for the decision, at most TOOLCRIB_GATEWAY_APPROVAL_WAIT
seconds and never past the request's expiry, without polling: it listens on its
caller's inbox group, the doorbell the answer path and the expiry sweep ring
(agents.requests.rings), and reads the row again on each ring, and every
CHECK_EVERY seconds in case a ring was lost (the database is the log). A client
that cannot wait that long gets "waiting for approval" (WAITING); the same caller
calling the same tool with the same arguments later waits on that request again,
or, once it is approved, runs it: once (`resumed_at`, set by one conditional
UPDATE).
"""

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.db.models import Q
from django.utils import timezone
from django.utils.crypto import salted_hmac

from agents.models import Request
from agents.pauses import ANSWER_ARGUMENTS, ANSWER_EDITED_BY, answer, record, wording
from agents.timeline import streams
from toolsets.gateway.auth import Caller
from toolsets.governance.direct import Held

PENDING = Request.Status.PENDING
APPROVED = Request.Status.APPROVED
# The structured result's status of a call still waiting when the handler stops.
WAITING = "waiting_for_approval"
# Seconds between reads of a waiting request's row, and between progress notes.
CHECK_EVERY = 5.0
# The shortest pause, so a clock a hair behind the database's never spins.
MIN_PAUSE = 0.05
DIGEST_SALT = "toolcrib.gateway.approval-args"

Progress = Callable[[float, float | None, str], Awaitable[None]]


def args_digest(args: Mapping[str, Any]) -> str:
    """A keyed digest of a call's arguments as sent: the same call made again has
    it; the secrets in them are never stored (the request's `args` are redacted)."""
    canonical = json.dumps(
        args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return salted_hmac(DIGEST_SALT, canonical, algorithm="sha256").hexdigest()


async def afind_owed(*, caller: Caller, full_name: str, digest: str) -> Request | None:
    """The caller's request for this very call that is still owed: pending, or
    approved and not yet run; the newest, with who may decide it loaded."""
    owed = Q(status=PENDING) | Q(status=APPROVED, resumed_at__isnull=True)
    rows = (
        Request.objects.select_related("caller", "answered_by")
        .filter(
            owed,
            kind=Request.Kind.APPROVAL,
            session__isnull=True,
            caller_id=caller.user.pk,
            tool_name=full_name,
            args_digest=digest,
        )
        .order_by("-id")
    )
    return await rows.afirst()


async def ahold(
    *,
    caller: Caller,
    client: str,
    full_name: str,
    args: Mapping[str, Any],
    digest: str,
    held: Held,
) -> Request:
    """Record the held call's approval request: in the approvers' inboxes now."""
    return await record.arecord_gateway_approval(
        caller_id=caller.user.pk,
        client=client,
        call_id=held.call_id,
        tool_name=full_name,
        args=args,
        args_digest=digest,
        hint=held.hint,
        answer_group=held.answer_group,
        timeout=held.timeout,
        self_approval=held.self_approval,
        description=held.description,
        approvals_required=held.approvals_required,
    )


async def await_decision(
    *, request: Request, wait: float, progress: Progress
) -> Request:
    """The request once decided or expired, or as it is after `wait` seconds.

    Past its expiry the request is expired here (the one answer path), as the
    sweep would; `progress` hears how long it has waited, every CHECK_EVERY.
    """
    layer = get_channel_layer()
    channel, group = None, streams.inbox_user_group(request.caller_id)
    if layer is not None:
        streams.bind_home_loop(asyncio.get_running_loop())
        channel = await layer.new_channel()
        await layer.group_add(group, channel)
    try:
        return await _await(layer, channel, request.pk, wait, progress)
    finally:
        if channel is not None:
            await layer.group_discard(group, channel)


async def aclaim(request: Request) -> bool:
    """Mark an approved request's call as run; False if it ran already (once)."""
    claimed = await Request.objects.filter(
        pk=request.pk, status=APPROVED, resumed_at__isnull=True
    ).aupdate(resumed_at=timezone.now())
    return claimed == 1


def waiting_message(request: Request) -> str:
    """What a client reads of a call still waiting for its approval."""
    until = ""
    if request.expires_at is not None:
        until = f" It expires at {request.expires_at.isoformat()}."
    return (
        f"Waiting for approval: request {request.pk} is in the approver's inbox "
        f"({wording.who_may_answer(request)} may decide it). {request.tool_name} "
        "has not run: call it again with the same arguments after it is "
        f"approved.{until}"
    )


def decision_of(request: Request) -> dict[str, Any] | None:
    """What the approver decided beyond yes, for the approved call's run: the
    arguments she changed it to, and who (None: run as asked)."""
    if request.approved_args is None:
        return None
    return {
        ANSWER_ARGUMENTS: request.approved_args,
        ANSWER_EDITED_BY: request.args_edited_by_id,
    }


def response_of(request: Request) -> str | None:
    """The text a person answered a rejected call with, in the tool's place."""
    stored = request.response if isinstance(request.response, dict) else {}
    text = stored.get("response")
    return text if isinstance(text, str) else None


def rejected_message(request: Request) -> str:
    who = request.answered_by.get_username() if request.answered_by else "a person"
    comment = f": {request.comment}" if request.comment else ""
    return f"{request.tool_name} was rejected by {who} and did not run{comment}."


def expired_message(request: Request) -> str:
    return (
        f"{request.tool_name} did not run: its approval (request {request.pk}) "
        "expired, nobody decided it in time."
    )


def ran_message(request: Request) -> str:
    return (
        f"The approved call of {request.tool_name} (request {request.pk}) has run "
        "already: an approval runs its call once. Call it again to ask anew."
    )


async def _await(
    layer: Any, channel: str | None, pk: int, wait: float, progress: Progress
) -> Request:
    loop = asyncio.get_running_loop()
    started = loop.time()
    deadline = started + max(wait, 0)
    while True:
        row = await _aread(pk)
        if row.status != PENDING:
            return row
        now = timezone.now()
        if row.expires_at is not None and row.expires_at <= now:
            await database_sync_to_async(answer.expire)(request_id=pk)
            row = await _aread(pk)
            if row.status != PENDING:
                return row
        left = deadline - loop.time()
        if left <= 0:
            return row
        await progress(loop.time() - started, wait, waiting_message(row))
        pause = min(left, CHECK_EVERY)
        if row.expires_at is not None:
            pause = min(pause, (row.expires_at - now).total_seconds())
        await _arung(layer, channel, pk, max(pause, MIN_PAUSE))


async def _arung(layer: Any, channel: str | None, pk: int, timeout: float) -> None:
    """Return when the inbox rings for request `pk`, or after `timeout` seconds."""
    if channel is None:
        await asyncio.sleep(timeout)
        return
    loop = asyncio.get_running_loop()
    until = loop.time() + timeout
    while (left := until - loop.time()) > 0:
        try:
            message = await asyncio.wait_for(layer.receive(channel), left)
        except TimeoutError:
            return
        frame = message.get("frame") or {}
        if message.get("type") == streams.INBOX_MESSAGE and frame.get("id") == pk:
            return


async def _aread(pk: int) -> Request:
    return await Request.objects.select_related("caller", "answered_by").aget(pk=pk)
