"""What kind of event an ADK event is, by what a user would notice first: the
`kind` stored with each event (agents.adk.sessions) and shown on the wire
(agents.events.wire, whose `Kind` lists them all; docs/events.md).

Also the names ADK and Toolcrib give the calls and metadata that make a kind.
"""

from google.adk.events import Event as AdkEvent

from agents.adk.auth import AUTH_CALL

CONFIRMATION_CALL = "adk_request_confirmation"
# Written by agents.adk.handoffs.HandoffPlugin on escalation events.
ESCALATED_TO = "toolcrib_escalated_to"


def event_kind(event: AdkEvent) -> str:
    """Classify an ADK event by what a user would notice first."""
    actions = event.actions
    calls = event.get_function_calls()
    call_names = {call.name for call in calls}
    if event.error_code or (event.error_message and not event.content):
        return "error"
    if actions.requested_auth_configs or AUTH_CALL in call_names:
        return "auth_request"
    if actions.requested_tool_confirmations or CONFIRMATION_CALL in call_names:
        return "approval_request"
    if actions.escalate:  # before transfer: an escalation may transfer to the parent
        return "escalation"
    if actions.transfer_to_agent:
        return "transfer"
    if calls:
        return "function_call"
    if event.get_function_responses():
        return "function_response"
    if text_of(event):
        return "user_message" if event.author == "user" else "text"
    if actions.artifact_delta:
        return "artifact"
    if actions.state_delta:
        return "state_delta"
    if event.output is not None:  # a workflow node's result (ADK 2.x)
        return "node_output"
    return "event"


def text_of(event: AdkEvent) -> str | None:
    """The text a user reads of the event: its parts' text, thoughts left out."""
    if not event.content or not event.content.parts:
        return None
    texts = [p.text for p in event.content.parts if p.text and not p.thought]
    return "".join(texts) or None
