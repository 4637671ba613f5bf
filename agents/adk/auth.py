"""ADK's auth payloads without their secrets: what may be stored, streamed and shown.

A credential travels through ADK inside events: the `adk_request_credential` call
(the AuthConfig asked for), the user's answer to it (the AuthConfig or
AuthCredential with the secret filled in), `actions.requested_auth_configs`, and
a state delta where ADK's REST tools cache the credential they used
(agents.redaction.is_credential_state). ADK needs the secret in memory for one
invocation; Toolcrib stores and shows every such event only as redacted_event()
returns it, and keeps the secret itself encrypted in a Credential row
(agents.adk.credentials). Events stored before a rule existed are shown through
it too: redaction happens on every read, not only on write.
"""

from google.adk.events import Event as AdkEvent

from agents.redaction import redact_secrets, redact_state

AUTH_CALL = "adk_request_credential"


def has_auth_payload(event: AdkEvent) -> bool:
    """True if the event carries an auth request, an answer to one, or a state
    delta with a credential or secret field in it."""
    if event.actions.requested_auth_configs:
        return True
    delta = event.actions.state_delta
    if delta and redact_state(delta) != delta:
        return True
    calls = event.get_function_calls()
    responses = event.get_function_responses()
    return any(part.name == AUTH_CALL for part in [*calls, *responses])


def redacted_event(event: AdkEvent) -> AdkEvent:
    """The event itself if it carries nothing of auth, else a copy without secrets."""
    if not has_auth_payload(event):
        return event
    data = event.model_dump(mode="json", exclude_none=True)
    for part in (data.get("content") or {}).get("parts") or []:
        call = part.get("function_call")
        if call and call.get("name") == AUTH_CALL:
            call["args"] = redact_secrets(call.get("args") or {})
        response = part.get("function_response")
        if response and response.get("name") == AUTH_CALL:
            response["response"] = redact_secrets(response.get("response") or {})
    actions = data.get("actions") or {}
    if actions.get("state_delta"):
        actions["state_delta"] = redact_state(actions["state_delta"])
    if actions.get("requested_auth_configs"):
        actions["requested_auth_configs"] = redact_secrets(
            actions["requested_auth_configs"]
        )
    return AdkEvent.model_validate(data)
