"""Long sessions made fast: a session's stored turns repeated until it holds N events.

For bench.session_open and the browser tests of paging back (they run it in the
server's own database with `manage.py shell -c`). The copies are the real events of
a real turn (calls, results, answers, run dividers), with their call and invocation
ids made unique per copy so that every call still meets only its own result.

    from bench.long_sessions import grow_session
    grow_session(session_id="...", events=1240)
"""

import bench.django_setup  # noqa: F401 - before any Django import

# isort: split

import json
import re
import uuid

from django.db import transaction

from agents.models import Event, Session

# ADK's function call ids (adk-<uuid>) and invocation ids (e-<uuid>), as stored.
_IDS = re.compile(r'"((?:adk|e)-[0-9a-f-]{8,})"')


def grow_session(*, session_id: str, events: int) -> int:
    """Repeat the session's stored events, in order, until it holds `events` of them.

    Returns the session's last seq. The session must hold at least one event.
    """
    with transaction.atomic():
        session = Session.objects.select_for_update().get(pk=session_id)
        template = list(Event.objects.filter(session=session).order_by("seq"))
        span = template[-1].timestamp - template[0].timestamp + 1
        rows, seq, copy = [], session.last_seq, 0
        while seq < events:
            copy += 1
            for row in template[: events - seq]:
                seq += 1
                rows.append(_copied(row, copy=copy, seq=seq, shift=copy * span))
        Event.objects.bulk_create(rows, batch_size=500)
        session.last_seq = seq
        session.save(update_fields=["last_seq"])
    return seq


def _copied(row: Event, *, copy: int, seq: int, shift: float) -> Event:
    text = _IDS.sub(lambda found: f'"{found.group(1)}-{copy}"', json.dumps(row.data))
    return Event(
        session_id=row.session_id,
        seq=seq,
        event_id=str(uuid.uuid4()),
        invocation_id=f"{row.invocation_id}-{copy}" if row.invocation_id else "",
        author=row.author,
        kind=row.kind,
        is_adk=row.is_adk,
        timestamp=row.timestamp + shift,
        data=json.loads(text),
    )
