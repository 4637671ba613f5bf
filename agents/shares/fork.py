"""Continue in a new session: a shared session's conversation, copied for its viewer.

The copy is a new session of the viewer's own, with the same agent (one she may
use), holding the shared events (ADK's, up to the share's seq) appended through
ADK's session service, so the model sees the history and every event takes the
one write path (agents.adk.sessions). What is copied carries no secret:

- each event as the session page shows it (agents.adk.auth.redacted_event, and
  every tool call's arguments and result through agents.redaction), with no state
  or artifact delta and no auth request;
- session-scope state only, without `temp:` keys, credential entries or
  secret-named keys (`user:` and `app:` state are the owner's and the team's);
- no Credential row, no artifact, no memory: the viewer signs in to tools herself.
"""

from typing import Any

from asgiref.sync import async_to_sync
from google.adk.events import Event as AdkEvent

from agents.adk.auth import redacted_event
from agents.adk.sessions import DjangoSessionService
from agents.models import Event, Session, Share
from agents.redaction import is_secret_key, redact_secrets, redact_state
from agents.sessions import create_session, get_usable_agent
from agents.shares.errors import ShareNotFound

TEMP_PREFIX = "temp:"
# What a copied event leaves out: state is copied once, files and auth are not.
DROPPED_ACTIONS = ("state_delta", "artifact_delta", "requested_auth_configs")


def fork_share(*, share: Share, user) -> Session:
    """A new session of `user` continuing the shared one, as it was shared.

    Raises:
        AgentNotAvailable, AgentNotLoaded: `user` may not use the agent now.
        ShareNotFound: the shared session has no agent (a row ADK made alone).
    """
    source = share.session
    if source.agent is None:
        raise ShareNotFound()
    agent = get_usable_agent(user=user, name=source.agent.name)
    session = create_session(user=user, agent=agent)
    session.state = copied_state(source.state)
    session.title = source.title
    session.save(update_fields=["state", "title"])
    rows = Event.objects.filter(
        session=source, is_adk=True, seq__lte=share.upto_seq
    ).order_by("seq")
    events = [copied_event(AdkEvent.model_validate(row.data)) for row in rows]
    async_to_sync(_append)(session, events)
    return Session.objects.select_related("agent", "owner").get(pk=session.pk)


def copied_state(state: dict[str, Any]) -> dict[str, Any]:
    """Session-scope state as a copy may hold it (see the module)."""
    kept = redact_state(state)
    return {
        key: value
        for key, value in kept.items()
        if not key.startswith(TEMP_PREFIX) and not is_secret_key(key)
    }


def copied_event(event: AdkEvent) -> AdkEvent:
    """The event as the session page shows it, without what the copy leaves out."""
    data = redacted_event(event).model_dump(mode="json", exclude_none=True)
    for part in (data.get("content") or {}).get("parts") or []:
        call = part.get("function_call")
        if call:
            call["args"] = redact_secrets(call.get("args") or {})
        response = part.get("function_response")
        if response:
            response["response"] = redact_secrets(response.get("response") or {})
    actions = data.get("actions") or {}
    for name in DROPPED_ACTIONS:
        actions.pop(name, None)
    return AdkEvent.model_validate(data)


async def _append(session: Session, events: list[AdkEvent]) -> None:
    service = DjangoSessionService()
    adk = await service.get_session(
        app_name=session.app_name, user_id=session.user_id, session_id=session.adk_id
    )
    for event in events:
        await service.append_event(adk, event)
