"""A conditional grant on a URL judges the destination, not the text.

With a prefix `http://host/ok`, both `/ok/../page` and `/ok/../redirect?to=/page`
fetched `/page`; an anchored pattern `^http://host/ok$` let `http://host/ok\\n`
through (Python's `$`). Now a condition on a URL argument is judged on the
normalized URL, a prefix ends on a path segment boundary, every redirect hop is
judged by the same condition, and patterns match the whole value.

Each attack goes through the real governance path (a user with a conditional
grant, the direct invoke endpoint or a turn) against a real loopback server,
which resolves paths the way web servers do and records every path it served:
a refused request never reaches it.
"""

import posixpath
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from google.adk.agents import LlmAgent
from google.adk.models import LlmRequest, LlmResponse

from agents.adk.builder import sync_code_agents
from agents.adk.offline import (
    OfflineLlm,
    calls_response,
    latest_user_text,
    text_response,
    trailing_function_responses,
)
from agents.adk.offline_matching import ChosenCall
from agents.models import Request
from toolsets import access
from toolsets.builtin import http
from toolsets.catalog import sync_catalog
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)


class Site(BaseHTTPRequestHandler):
    """/ok and /page answer, any .../redirect?to=X redirects to X; every path is
    resolved as a file server resolves it (decoded, dot segments removed)."""

    server: "SiteServer"

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        path = posixpath.normpath(unquote(parts.path)) if parts.path else "/"
        self.server.hits.append(path)
        if path.endswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", parse_qs(parts.query)["to"][0])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = path.encode()
        self.send_response(200 if path in ("/ok", "/page") else 404)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class SiteServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Site)
        self.hits: list[str] = []

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.server_address[1]}{path}"


@pytest.fixture
def site(settings) -> Iterator[SiteServer]:
    server = SiteServer()
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    settings.TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    settings.TOOLCRIB_BUILTIN_HTTP_TIMEOUT = 5
    settings.TOOLCRIB_BUILTIN_HTTP_MAX_REDIRECTS = 3
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def catalog(settings, db):
    settings.TOOLCRIB_AGENTS = [
        *settings.TOOLCRIB_AGENTS,
        "tests.security.test_url_conditions.fetcher",
    ]
    sync_code_agents()
    sync_catalog()
    access.invalidate()
    yield
    access.invalidate()


@pytest.fixture
def allow(catalog, api_for, make_user, alice):
    """Staff allow alice a tool only on a condition on its `url`."""
    staff = api_for(make_user("root", is_staff=True))

    def grant(tool: str, condition: dict, otherwise: str = "deny") -> None:
        body = {
            "user": "alice",
            "tool": tool,
            "effect": "allow",
            "condition": {"url": condition},
            "otherwise": otherwise,
        }
        response = staff.post("/api/grants/", body, format="json")
        assert response.status_code == 201, response.content

    return grant


@pytest.fixture
def invoke(api_for, alice):
    def call(tool: str, url: str):
        return api_for(alice).post(
            f"/api/tools/{tool}/invoke/", {"args": {"url": url}}, format="json"
        )

    return call


def last_call() -> ToolCall:
    return ToolCall.objects.order_by("-started_at", "-id").first()


@pytest.mark.parametrize(
    "path",
    [
        "/ok/../page",
        "/ok/%2e%2e/page",
        "/ok/%2E%2E/page",
        "/ok/.%2e/page",
        "/ok/../redirect?to=/page",
        "/ok/..%2fpage",
        "/ok/..;/page",
        "/ok//../page",
        "/okay",
        "/ok@127.0.0.1/page",
    ],
)
def test_a_url_prefix_refuses_a_url_that_leaves_it(site, allow, invoke, path):
    allow("http.http_get", {"prefix": site.url("/ok")})

    response = invoke("http.http_get", site.url(path))

    assert response.status_code == 403, response.content
    assert "outside the condition" in last_call().access_rule
    assert site.hits == []


def test_a_url_prefix_allows_the_url_and_what_is_below_it(site, allow, invoke):
    allow("http.http_get", {"prefix": site.url("/ok")})

    same = invoke("http.http_get", site.url("/ok"))
    below = invoke("http.http_get", site.url("/ok/more/../page"))  # /ok/page

    assert same.status_code == 200, same.content
    assert same.json()["result"]["body"] == "/ok"
    assert below.status_code == 200, below.content
    assert site.hits == ["/ok", "/ok/page"]


def test_a_redirect_out_of_the_prefix_is_refused_before_it_is_followed(
    site, allow, invoke
):
    allow("http.http_get", {"prefix": site.url("/ok")})

    response = invoke("http.http_get", site.url("/ok/redirect?to=/page"))

    assert response.status_code == 403, response.content
    assert "redirected to " + site.url("/page") in response.json()["detail"]
    row = last_call()
    assert row.status == ToolCall.Status.DENIED
    assert row.access_rule.startswith("denied: redirect to " + site.url("/page"))
    assert "outside the condition of grant" in row.access_rule
    assert site.hits == ["/ok/redirect"]


def test_a_redirect_within_the_prefix_is_followed(site, allow, invoke):
    allow("http.http_get", {"prefix": site.url("/ok")})

    response = invoke("http.http_get", site.url("/ok/redirect?to=/ok"))

    assert response.status_code == 200, response.content
    assert response.json()["result"]["url"] == site.url("/ok")
    assert site.hits == ["/ok/redirect", "/ok"]


def test_the_webpage_tool_judges_each_redirect_hop_too(site, allow, invoke):
    allow("webpage.fetch_webpage", {"prefix": site.url("/ok")})

    response = invoke("webpage.fetch_webpage", site.url("/ok/redirect?to=/page"))

    assert response.status_code == 403, response.content
    assert last_call().access_rule.startswith("denied: redirect to ")
    assert site.hits == ["/ok/redirect"]


def test_an_anchored_pattern_does_not_let_a_trailing_newline_through(
    site, allow, invoke
):
    allow("http.http_get", {"pattern": "^" + re.escape(site.url("/ok")) + "$"})

    newline = invoke("http.http_get", site.url("/ok") + "\n")
    exact = invoke("http.http_get", site.url("/ok"))

    assert newline.status_code == 403, newline.content
    assert exact.status_code == 200, exact.content
    assert site.hits == ["/ok"]


def test_a_pattern_is_judged_on_the_normalized_url(site, allow, invoke):
    allow("http.http_get", {"pattern": re.escape(site.url("/ok")) + "(/.*)?"})

    escaping = invoke("http.http_get", site.url("/ok/%2e%2e/page"))
    within = invoke("http.http_get", site.url("/ok/sub/.."))

    assert escaping.status_code == 403, escaping.content
    assert within.status_code == 200, within.content
    assert site.hits == ["/ok"]


def test_the_default_port_written_out_is_the_same_destination(site, allow, invoke):
    allow("http.http_get", {"prefix": "http://127.0.0.1/ok"})

    response = invoke("http.http_get", "http://127.0.0.1:80/ok")

    # Allowed by the condition: it ran (nothing listens on port 80 here).
    assert response.status_code == 200, response.content
    assert last_call().access_rule.startswith("allowed by grant")


def test_an_upper_case_host_is_the_same_destination(site, allow, invoke):
    allow("http.http_get", {"prefix": site.url("/ok", host="localhost")})

    response = invoke("http.http_get", site.url("/ok", host="LocalHost"))

    assert response.status_code == 200, response.content
    assert response.json()["result"]["url"] == site.url("/ok", host="localhost")
    assert site.hits == ["/ok"]


def test_a_url_with_user_info_before_the_host_is_refused(site, allow, invoke):
    allow("http.http_get", {"prefix": site.url("/ok")})

    response = invoke("http.http_get", site.url("/ok", host="127.0.0.1@127.0.0.1"))

    assert response.status_code == 403, response.content
    assert "user info" in response.json()["detail"]
    assert site.hits == []


# The same through a model's turn: the model reads the refusal of the hop.


class FetchWhatIsSaid(OfflineLlm):
    """Calls http_get on the URL the user's message is, then says done."""

    def answer(self, llm_request: LlmRequest) -> LlmResponse:
        if trailing_function_responses(llm_request.contents):
            return text_response("done")
        url = latest_user_text(llm_request.contents)
        return calls_response([ChosenCall("http_get", {"url": url})])


def fetcher() -> LlmAgent:
    return LlmAgent(name="fetcher_agent", model=FetchWhatIsSaid(), tools=[http.toolset])


def responses_in(frames: list[dict]) -> list[dict]:
    return [
        r["response"] for frame in frames for r in frame["event"]["function_responses"]
    ]


def test_in_a_turn_the_model_reads_that_the_redirect_left_its_condition(
    site, allow, alice, start_session, say, events_of
):
    allow("http.http_get", {"prefix": site.url("/ok")})
    session = start_session(alice, "fetcher")

    say(alice, session, site.url("/ok/redirect?to=/page"))

    [response] = responses_in(events_of(alice, session))
    assert response["status"] == "error"
    assert "redirected to " + site.url("/page") in response["error_message"]
    assert last_call().status == ToolCall.Status.DENIED
    assert site.hits == ["/ok/redirect"]


def test_a_call_approved_outside_its_condition_still_stops_at_a_hop_outside_it(
    site, allow, alice, api_for, start_session, say, events_of
):
    allow("http.http_get", {"prefix": site.url("/ok")}, otherwise="approval")
    session = start_session(alice, "fetcher")

    held = say(alice, session, site.url("/redirect?to=/page"))
    approval = Request.objects.get(kind=Request.Kind.APPROVAL, session_id=session)
    decided = api_for(alice).post(
        f"/api/approvals/{approval.id}/decide/?wait=1",
        {"approved": True},
        format="json",
    )

    assert held["status"] == "waiting"
    assert decided.status_code == 200, decided.content
    # She approved /redirect, which ran; she never saw where it would send her.
    assert site.hits == ["/redirect"]
    assert last_call().status == ToolCall.Status.DENIED
    assert last_call().access_rule.startswith(
        "denied: redirect to " + site.url("/page")
    )
    assert (
        "redirected to " in responses_in(events_of(alice, session))[-1]["error_message"]
    )
