"""Secrets stored before a redaction rule existed: removed from the rows for good.

Whatever is read is redacted anyway (agents.adk.auth, agents.adk.sessions), so an
old row never shows a secret; this only stops it from resting in the database in
clear. Before Toolcrib kept ADK's REST tool credentials in memory, a token given to
an imported OpenAPI operation was stored in Session.state and in the `state_delta`
of the event that used it. `manage.py scrub_credentials` runs scrub_stored_secrets().
"""

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from agents.models import AppState, Event, Session, UserState
from agents.redaction import is_credential_state, redact_state

BATCH = 500


@dataclass(frozen=True)
class Scrubbed:
    """How many rows of each kind had a secret removed."""

    sessions: int
    events: int
    shared_state: int


def scrub_stored_secrets() -> Scrubbed:
    """Drop credential entries from stored state and event deltas; idempotent."""
    return Scrubbed(
        sessions=_scrub_sessions(),
        events=_scrub_events(),
        shared_state=_scrub_shared_state(),
    )


def _scrub_sessions() -> int:
    changed = 0
    for pk in Session.objects.exclude(state={}).values_list("pk", flat=True):
        with transaction.atomic():
            # Locked, so a turn writing meanwhile is neither lost nor overwritten.
            row = Session.objects.select_for_update().only("state").get(pk=pk)
            kept = _without_credentials(row.state)
            if kept != row.state:
                Session.objects.filter(pk=pk).update(state=kept)
                changed += 1
    return changed


def _scrub_events() -> int:
    changed = 0
    rows = Event.objects.filter(is_adk=True).only("pk", "data")
    for row in rows.iterator(chunk_size=BATCH):
        actions = row.data.get("actions") or {}
        delta = actions.get("state_delta")
        if not delta or redact_state(delta) == delta:
            continue
        data = {**row.data, "actions": {**actions, "state_delta": redact_state(delta)}}
        Event.objects.filter(pk=row.pk).update(data=data)
        changed += 1
    return changed


def _scrub_shared_state() -> int:
    deleted = 0
    for model in (UserState, AppState):
        rows = model.objects.only("pk", "key", "value")
        stale = [r.pk for r in rows.iterator() if is_credential_state(r.key, r.value)]
        deleted += model.objects.filter(pk__in=stale).delete()[0]
    return deleted


def _without_credentials(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if not is_credential_state(k, v)}
