import pytest

from tests.toolsets.builtin.adk import call_tool
from tests.toolsets.builtin.servers import html_reply, json_reply
from toolsets.builtin.webpage import fetch_webpage, readable, toolset
from toolsets.refusals import Refusal

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db

PAGE = """<!doctype html>
<html><head><title>Toolcrib &amp; friends</title>
<style>body { color: red }</style><script>var secret = "no";</script></head>
<body><nav><a href="/">Home</a></nav>
<h1>Tools for teams</h1>
<p>Run agents   and
their tools.</p>
<h2>Governance</h2><p>Grants decide <b>who</b> may use what.</p>
<ul><li>calculator</li><li>http</li></ul>
<script>document.write("hidden")</script>
</body></html>"""


@pytest.fixture
def allow_loopback(settings):
    settings.TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS = ["127.0.0.1"]
    return settings


def test_readable_text_keeps_title_headings_and_paragraphs():
    page = readable(PAGE)
    assert page.title == "Toolcrib & friends"
    assert page.headings == ["Tools for teams", "Governance"]
    assert page.blocks == [
        "Home",
        "# Tools for teams",
        "Run agents and their tools.",
        "## Governance",
        "Grants decide who may use what.",
        "calculator",
        "http",
    ]


async def test_fetches_an_allowlisted_page_as_text(web, allow_loopback):
    web.routes["/"] = html_reply(PAGE)
    response = await call_tool([toolset], "fetch_webpage", url=web.url("/"))
    assert response["status"] == "success"
    assert response["title"] == "Toolcrib & friends"
    assert "Run agents and their tools." in response["text"]
    assert "secret" not in response["text"] and "color" not in response["text"]
    assert response["truncated"] is False


async def test_long_text_is_cut_to_the_limit(web, allow_loopback):
    allow_loopback.TOOLCRIB_BUILTIN_WEBPAGE_MAX_CHARS = 20
    web.routes["/"] = html_reply(PAGE)
    response = await fetch_webpage(web.url("/"))
    assert len(response["text"]) == 20
    assert response["truncated"] is True


async def test_a_page_off_the_allowlist_is_refused(web, allow_loopback):
    response = await call_tool(
        [toolset], "fetch_webpage", url=web.url("/", host="localhost")
    )
    assert response["status"] == "error"
    assert "not on the allowlist" in response["error_message"]


async def test_something_that_is_not_a_page_is_refused(web, allow_loopback):
    web.routes["/data"] = json_reply({"a": 1})
    with pytest.raises(Refusal, match="not a web page"):
        await fetch_webpage(web.url("/data"))


async def test_the_administrators_user_agent_is_sent(web, allow_loopback):
    """The GoAgent WebScraper's userAgent; unset, httpx's own."""
    web.routes["/"] = html_reply(PAGE)
    allow_loopback.TOOLCRIB_BUILTIN_WEBPAGE_USER_AGENT = "Toolcrib/1.0 (+ops@example)"

    await call_tool([toolset], "fetch_webpage", url=web.url("/"))
    allow_loopback.TOOLCRIB_BUILTIN_WEBPAGE_USER_AGENT = ""
    await call_tool([toolset], "fetch_webpage", url=web.url("/"))

    agents = [headers["User-Agent"] for _, _, headers in web.seen]
    assert agents[0] == "Toolcrib/1.0 (+ops@example)"
    assert agents[1].startswith("python-httpx/")
