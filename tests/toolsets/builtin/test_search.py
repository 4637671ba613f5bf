"""The search tool (the GoAgent SearchTool): a SearXNG-compatible JSON endpoint an
administrator configures, tested against a local server, and a provider of one's own."""

import pytest

from tests.toolsets.builtin import servers
from tests.toolsets.builtin.adk import call_tool
from tests.toolsets.builtin.servers import Reply, json_reply
from toolsets.builtin.search import SearchResult, SearchToolset, toolset

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db

HITS = {
    "query": "toolcrib",
    "number_of_results": 3,
    "results": [
        {
            "title": "Toolcrib",
            "url": "https://toolcrib.example/",
            "content": "Run ADK agents and govern their tools.",
            "engine": "duckduckgo",
            "score": 3.0,
        },
        {
            "title": "Toolcrib docs",
            "url": "https://toolcrib.example/docs",
            "content": "Built-in tools.",
        },
        {"title": "No link", "content": "a hit without a url is skipped"},
        {"title": "Third", "url": "https://third.example/", "content": "x" * 900},
    ],
}


@pytest.fixture
def searx(web, settings):
    """The local server as the provider: GET /search?q=...&format=json."""
    web.routes["/search"] = json_reply(HITS)
    settings.TOOLCRIB_BUILTIN_SEARCH_URL = web.url("/search")
    settings.TOOLCRIB_BUILTIN_SEARCH_MAX_RESULTS = 5
    settings.TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS = []  # the endpoint needs none
    settings.TOOLCRIB_BUILTIN_HTTP_TIMEOUT = 2
    return web


async def test_a_search_asks_the_provider_and_returns_its_results(searx):
    response = await call_tool([toolset], "web_search", query="toolcrib")

    assert response["status"] == "success"
    assert response["query"] == "toolcrib"
    assert response["count"] == 3
    first, second, third = response["results"]
    assert first == {
        "title": "Toolcrib",
        "url": "https://toolcrib.example/",
        "snippet": "Run ADK agents and govern their tools.",
    }
    assert second["url"] == "https://toolcrib.example/docs"
    assert len(third["snippet"]) == 500  # cut
    [(method, path, headers)] = searx.seen
    assert (method, path) == ("GET", "/search?q=toolcrib&format=json")
    assert headers["Accept"] == "application/json"


async def test_the_administrators_cap_and_the_models_ask_limit_the_results(
    searx, settings
):
    settings.TOOLCRIB_BUILTIN_SEARCH_MAX_RESULTS = 2

    capped = await call_tool([toolset], "web_search", query="toolcrib", max_results=9)
    fewer = await call_tool([toolset], "web_search", query="toolcrib", max_results=1)
    zero = await call_tool([toolset], "web_search", query="toolcrib", max_results=0)

    assert capped["count"] == 2
    assert fewer["count"] == 1
    assert zero["status"] == "error" and "at least 1" in zero["error_message"]


async def test_every_search_is_refused_until_a_provider_is_set(settings):
    settings.TOOLCRIB_BUILTIN_SEARCH_URL = ""

    response = await call_tool([toolset], "web_search", query="anything")

    assert response["status"] == "error"
    assert "TOOLCRIB_BUILTIN_SEARCH_URL" in response["error_message"]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(500, b"down"), "answered HTTP 500"),
        (Reply(200, b"<html>", {"Content-Type": "text/html"}), "not JSON"),
        (json_reply({"answers": []}), "no list of results"),
    ],
)
async def test_a_provider_that_answers_badly_is_an_error_the_model_reads(
    searx, reply, reason
):
    searx.routes["/search"] = reply

    response = await call_tool([toolset], "web_search", query="toolcrib")

    assert response["status"] == "error"
    assert reason in response["error_message"]


async def test_the_provider_cannot_send_the_tool_to_another_host(searx):
    other = servers.serve()
    try:
        searx.routes["/search"] = Reply(302, headers={"Location": other.url("/")})
        response = await call_tool([toolset], "web_search", query="toolcrib")
    finally:
        servers.stop(other)

    assert response["status"] == "error"
    assert "not on the allowlist" in response["error_message"]
    assert other.seen == []


class Catalogue:
    """A provider of one's own (the GoAgent SearchProvider)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        self.asked.append((query, max_results))
        return [
            SearchResult(f"{query} {n}", f"https://c.example/{n}", "") for n in (1, 2)
        ]


async def test_a_search_toolset_over_a_provider_of_ones_own(settings):
    settings.TOOLCRIB_BUILTIN_SEARCH_MAX_RESULTS = 5
    provider = Catalogue()

    response = await call_tool(
        [SearchToolset(provider=provider)], "web_search", query="bolts", max_results=2
    )

    assert provider.asked == [("bolts", 2)]
    assert [hit["url"] for hit in response["results"]] == [
        "https://c.example/1",
        "https://c.example/2",
    ]
