"""The one recorder: every pause for a person in a stored event becomes a Request.

turns/drive.py calls arecord_requests() for each event the Runner yields, before
publishing it: a client that sees a pending request may answer it at once. Each
new request rings the inboxes of who may answer it and of its requester
(rings.py), once stored. A request that expires has its sweep scheduled here, for
a little after its time; an approval its requester always allows in this session
(a standing approval) has the standing sweep scheduled at once, which approves it.

A call through the MCP gateway that needs approval is no event of a turn: the
gateway records it with arecord_gateway_approval, a request with no session,
rung and swept the same way.

Each new request (but one a standing approval approves at once) is announced
(signals.requests_waiting), and agents.notices queues its notices: mail and
webhooks, sent off the turn's path.
"""

import asyncio
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.utils import timezone
from google.adk.agents import BaseAgent
from google.adk.events import Event as AdkEvent

from agents import timers
from agents.models import Request, Run, StandingApproval
from agents.redaction import redact_secrets
from agents.requests import rings, signals
from agents.requests.kinds import KINDS, expiry_after

# The sweeps' Celery tasks (agents/answers/tasks.py). They are scheduled by name:
# a sweep answers requests, which starts turns, whose driver calls this recorder.
EXPIRE_REQUESTS = "agents.expire_requests"
APPROVE_STANDING = "agents.approve_standing"
# A call asked again keeps this much of its ADK id in its own call_id (of 128),
# then `#<run id>`.
REKEYED_PREFIX = 90
# After a request's time: the sweep finds it due.
SWEEP_MARGIN = 0.2


async def arecord_requests(run: Run, event: AdkEvent, root: BaseAgent) -> list[Request]:
    """One pending Request per call of the event that waits for a person.

    A request already recorded (the same call id in the session) is kept as it is.
    Returns the requests this event recorded, stored.
    """
    if event.partial or not event.get_function_calls():
        return []
    rows = []
    for kind in KINDS.values():
        for call in kind.calls(event):
            row = await kind.arecord(call, run=run, event=event, root=root)
            if row is not None:
                rows.append(row)
    if not rows:
        return []
    stored = await _astore_new(run, rows)
    standing = await _astanding(run, stored)
    # The driver runs outside any transaction: the rows are committed already.
    waiting = [r for r in stored if r.pk not in standing]
    await rings.aring(waiting, rings.NEW)
    await sync_to_async(signals.send_waiting)(waiting)
    if standing:
        await asyncio.to_thread(timers.later, 0, APPROVE_STANDING)
    for when in sorted({row.expires_at for row in stored if row.expires_at}):
        await asyncio.to_thread(_sweep_at, when)
    return stored


async def arecord_gateway_approval(
    *,
    caller_id: int,
    client: str,
    call_id: str,
    tool_name: str,
    args: Mapping[str, Any],
    args_digest: str,
    hint: str,
    answer_group: str,
    timeout: float | None,
    self_approval: bool,
    description: str,
    approvals_required: int = 1,
) -> Request:
    """Record a pending approval of a call held by the MCP gateway, stored and rung.

    `args` are the call's arguments, stored redacted (agents.redaction);
    `args_digest` names them as sent, to match the same call made again.
    """
    row = await Request.objects.acreate(
        kind=Request.Kind.APPROVAL,
        caller_id=caller_id,
        client=client,
        agent=client,
        call_id=call_id,
        tool_call_id=call_id,
        tool_name=tool_name,
        args=redact_secrets(dict(args)),
        args_digest=args_digest,
        hint=hint,
        answer_group=answer_group,
        expires_at=expiry_after(timeout),
        self_approval=self_approval,
        description=description,
        approvals_required=max(approvals_required, 1),
        catalog_tool=tool_name,
    )
    stored = await Request.objects.select_related("caller").aget(pk=row.pk)
    await rings.aring([stored], rings.NEW)
    await sync_to_async(signals.send_waiting)([stored])
    if stored.expires_at:
        await asyncio.to_thread(_sweep_at, stored.expires_at)
    return stored


async def _astore_new(run: Run, rows: list[Request]) -> list[Request]:
    """Store the rows not recorded before; the stored ones, with their ids."""
    await _akey_asked_again(run, rows)
    call_ids = [row.call_id for row in rows]
    known = Request.objects.filter(session_id=run.session_id, call_id__in=call_ids)
    old = {call_id async for call_id in known.values_list("call_id", flat=True)}
    new = [row for row in rows if row.call_id not in old]
    if not new:
        return []
    await Request.objects.abulk_create(new, ignore_conflicts=True)
    stored = Request.objects.select_related("session").filter(
        session_id=run.session_id,
        call_id__in=[row.call_id for row in new],
        run_id=run.pk,
    )
    return [row async for row in stored]


async def _akey_asked_again(run: Run, rows: list[Request]) -> None:
    """Key by their own call_id the calls ADK asks again under an id the session
    has an ended request of: a workflow asks under a fixed id (a node's
    confirmation, `wf_tool_confirmation:<node path>`, in every turn that reaches
    it; a RequestInput given an interrupt_id, in each round of a loop). Each ask is
    then a request of its own, its ADK id kept in `tool_call_id` (what the answer
    is sent back under, kinds.adk_call_id, and what a client may answer it by)."""
    asked = [row for row in rows if row.kind == Request.Kind.CALL]
    if not asked:
        return
    ended = Request.objects.filter(
        session_id=run.session_id, call_id__in=[row.call_id for row in asked]
    ).exclude(status=Request.Status.PENDING)
    again = {call_id async for call_id in ended.values_list("call_id", flat=True)}
    for row in asked:
        if row.call_id in again:
            row.tool_call_id = row.call_id
            row.call_id = f"{row.call_id[:REKEYED_PREFIX]}#{run.pk}"


async def _astanding(run: Run, stored: list[Request]) -> set[int]:
    """The ids of the stored approvals that a standing approval approves."""
    allowed = [
        r
        for r in stored
        if r.kind == Request.Kind.APPROVAL
        and r.self_approval
        and r.approvals_required <= 1  # the two-person rule: never the requester
    ]
    if not allowed:
        return set()
    standing = StandingApproval.objects.filter(
        session_id=run.session_id, tool_name__in=[r.tool_name for r in allowed]
    ).values_list("tool_name", flat=True)
    tools = {name async for name in standing}
    return {r.pk for r in allowed if r.tool_name in tools}


def _sweep_at(when: datetime) -> None:
    """Sweep when a request's time is up, so its agent is told with nobody looking."""
    delay = max((when - timezone.now()).total_seconds(), 0) + SWEEP_MARGIN
    timers.later(delay, EXPIRE_REQUESTS)
