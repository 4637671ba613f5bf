"""The one recorder: every pause for a person in a stored event becomes a Request.

turns/drive.py calls arecord_requests() for each event the Runner yields, before
publishing it: a client that sees a pending request may answer it at once. A
request that expires has its sweep scheduled here, for a little after its time.
"""

import asyncio
from datetime import datetime

from django.utils import timezone
from google.adk.agents import BaseAgent
from google.adk.events import Event as AdkEvent

from agents.models import Request, Run
from agents.requests.kinds import KINDS
from agents.turns import timers

# The sweep's Celery task (agents/requests/tasks.py). It is scheduled by name: the
# sweep answers requests, which starts turns, whose driver calls this recorder.
EXPIRE_REQUESTS = "agents.expire_requests"
# After a request's time: the sweep finds it due.
SWEEP_MARGIN = 0.2


async def arecord_requests(run: Run, event: AdkEvent, root: BaseAgent) -> list[Request]:
    """One pending Request per call of the event that waits for a person.

    A request already recorded (the same call id in the session) is kept as it is.
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
    await Request.objects.abulk_create(rows, ignore_conflicts=True)
    for when in sorted({row.expires_at for row in rows if row.expires_at}):
        await asyncio.to_thread(_sweep_at, when)
    return rows


def _sweep_at(when: datetime) -> None:
    """Sweep when a request's time is up, so its agent is told with nobody looking."""
    delay = max((when - timezone.now()).total_seconds(), 0) + SWEEP_MARGIN
    timers.later(delay, EXPIRE_REQUESTS)
