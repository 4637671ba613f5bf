"""OAuth2 authorization-code sign-ins: a tool's credential request answered by the
provider's redirect.

A tool asks for an OAuth2 credential (ADK's AuthConfig with an authorization-code
flow, e.g. an AuthenticatedFunctionTool); ADK answers the call with an
`adk_request_credential` carrying the provider's authorization URL and a `state`
(agents.requests records it as a request of kind "credential"). The request's JSON
offers that URL with Toolcrib's callback as its `redirect_uri`
(authorization_url()); the owner follows it, signs in at the provider, and the
provider sends the browser back to the callback with a code and the state.

answer_authorization() answers the request whose state came back, by the one
answer path (agents.answers.answer): the owner only, once. The answer is the
redirect itself (ADK's `auth_response_uri`); the resumed turn's ADK exchanges the
code at the provider's token endpoint with the client secret of the tool's own
configuration (never sent to the browser or stored), and the tool's credential
manager keeps the tokens, sealed, in the owner's Credential row
(agents.adk.credentials.DjangoCredentialService), refreshing them when they
expire.
"""

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.utils.translation import gettext as _

from agents.adk.credentials import unseal_code_verifier
from agents.answers.answer import answer_request
from agents.models import Request, Run
from agents.requests.kinds import CREDENTIAL
from project.errors import NotFoundError

OAUTH2_SCHEMES = frozenset({"oauth2", "openIdConnect"})


def signed_in_credential(request: Request) -> dict[str, Any]:
    """The OAuth2 part of what ADK asked the user for (auth URI, state, ...)."""
    exchanged = request.auth_config.get("exchanged_auth_credential") or {}
    return exchanged.get("oauth2") or {}


def authorization_url(request: Request, *, redirect_uri: str) -> str | None:
    """Where the owner signs in to answer `request`, sent back to `redirect_uri`;
    None for a request answered otherwise (an API key, a token typed in)."""
    if request.kind != Request.Kind.CREDENTIAL or request.scheme not in OAUTH2_SCHEMES:
        return None
    oauth2 = signed_in_credential(request)
    if not oauth2.get("auth_uri") or not oauth2.get("state"):
        return None
    parts = urlsplit(oauth2["auth_uri"])
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "redirect_uri"]
    query.append(("redirect_uri", redirect_uri))
    return urlunsplit(parts._replace(query=urlencode(query)))


def answer_authorization(*, user, state: str, response_uri: str) -> Run:
    """Answer the credential request whose sign-in came back with `state`.

    `response_uri` is the redirect the provider sent, as received (with its code
    and state); the part before the query is the redirect URI the sign-in used.

    Raises:
        NotFoundError: No pending request waits for this state.
        NotYours, AlreadyAnswered: as answer_request() refuses.
    """
    pending = Request.objects.filter(
        kind=Request.Kind.CREDENTIAL,
        scheme__in=OAUTH2_SCHEMES,
        auth_config__exchanged_auth_credential__oauth2__state=state,
    ).first()
    if not state or pending is None:
        raise NotFoundError(_("No sign-in waits for this answer; ask the tool again."))
    redirect_uri = urlunsplit(urlsplit(response_uri)._replace(query="", fragment=""))
    return answer_request(
        user=user,
        kind=CREDENTIAL,
        request_id=pending.pk,
        answer={
            "auth_response_uri": response_uri,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_verifier": unseal_code_verifier(pending.sealed_verifier) or "",
        },
    )
