"""The http tool's administrator API with each user's own key: asked once (ADK's
request_credential), sealed, sent to the API's host only, never seen by the model."""

import json

import pytest

from agents.adk.builder import sync_code_agents
from agents.models import Request
from tests.toolsets.builtin.servers import json_reply
from toolsets import grants
from toolsets.catalog import sync_catalog
from toolsets.models import ToolCall, Toolset

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "sk-api-3Fq8Lw1Zr7"


@pytest.fixture
def api_caller(settings, web, alice):
    settings.TOOLCRIB_AGENTS = ["tests.toolsets.builtin.agents.api_caller"]
    settings.TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS = []
    settings.TOOLCRIB_BUILTIN_HTTP_BASE_URL = web.url("/v1")
    settings.TOOLCRIB_BUILTIN_HTTP_HEADERS = {"X-Client": "toolcrib"}
    settings.TOOLCRIB_BUILTIN_HTTP_CREDENTIAL_HEADER = "Authorization: Bearer"
    settings.TOOLCRIB_BUILTIN_HTTP_TIMEOUT = 5
    web.routes["/v1/items"] = json_reply({"items": [1, 2]})
    sync_code_agents()
    sync_catalog()
    grants.grant_tool(
        target=Toolset.objects.get(name="http"), effect="allow", user=alice
    )
    return "api_caller"


def asked_for_key(session_id: str) -> Request:
    return Request.objects.get(kind=Request.Kind.CREDENTIAL, session_id=session_id)


def test_the_users_key_is_asked_once_and_sent_to_the_api_only(
    api_caller, web, alice, start_session, say, events_of, api_for
):
    session = start_session(alice, api_caller)

    waiting = say(alice, session, "read the items")
    request = asked_for_key(session)
    answered = api_for(alice).post(
        f"/api/auth-requests/{request.id}/answer/?wait=1",
        {"api_key": SECRET},
        format="json",
    )

    assert (waiting["status"], waiting["waiting_for"]) == ("waiting", "credential")
    assert request.credential_key.startswith("builtin_http_")
    assert answered.status_code == 200, answered.content
    assert answered.json()["status"] == "succeeded"
    [(method, path, headers)] = web.seen  # nothing went out before the key
    assert (method, path) == ("GET", "/v1/items")
    assert headers["Authorization"] == f"Bearer {SECRET}"  # not the model's
    assert headers["X-Client"] == "toolcrib"
    frames = json.dumps(events_of(alice, session))
    assert SECRET not in frames
    assert SECRET not in json.dumps(list(ToolCall.objects.values()), default=str)

    again = start_session(alice, api_caller)
    run = say(alice, again, "read the items again")

    assert run["status"] == "succeeded"  # the sealed key, without asking
    assert not Request.objects.filter(session_id=again).exists()
    assert web.seen[-1][2]["Authorization"] == f"Bearer {SECRET}"
