"""ADK's auth payloads without their secrets: what may be stored, streamed and shown.

A credential travels through ADK inside events: the `adk_request_credential` call
(the AuthConfig asked for), the user's answer to it (the AuthConfig or
AuthCredential with the secret filled in) and `actions.requested_auth_configs`.
ADK needs the answer in memory for one invocation; Toolcrib stores and shows
every such event only as redacted_event() returns it, and keeps the secret
itself encrypted in a Credential row (agents.adk.credentials).
"""

from google.adk.events import Event as AdkEvent

from agents.redaction import redact_secrets

AUTH_CALL = "adk_request_credential"


def has_auth_payload(event: AdkEvent) -> bool:
    """True if the event carries an auth request or an answer to one."""
    if event.actions.requested_auth_configs:
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
    if actions.get("requested_auth_configs"):
        actions["requested_auth_configs"] = redact_secrets(
            actions["requested_auth_configs"]
        )
    return AdkEvent.model_validate(data)
