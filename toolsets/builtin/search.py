"""The search toolset: web search through a provider an administrator configures.

The provider is a SearXNG-compatible JSON endpoint (TOOLCRIB_BUILTIN_SEARCH_URL,
e.g. http://searx.internal:8080/search): a search asks
`GET <endpoint>?q=<query>&format=json` and reads its `results` (`title`, `url`,
`content`). Until the endpoint is set, every search is refused. The endpoint's
host (and port) is the only one the tool reaches, a private one too (an
administrator named it); its answer is read within the http toolset's size and
time limits (TOOLCRIB_BUILTIN_HTTP_MAX_BYTES, _TIMEOUT), and a redirect to another
host is refused. TOOLCRIB_BUILTIN_SEARCH_MAX_RESULTS caps the results; the model
may ask for fewer.

Another provider is a toolset of its own, registered in TOOLCRIB_EXTRA_TOOLSETS:
`SearchToolset(provider=MyProvider())`, where a provider has
`async def search(query, max_results) -> list[SearchResult]` (the GoAgent
SearchProvider).
"""

import json
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import httpx
from django.conf import settings

from toolsets.builtin.base import BuiltinTool, BuiltinToolset, text_limit
from toolsets.builtin.http import host_entry, limits
from toolsets.net import Allowlist, fetch
from toolsets.refusals import Refusal

MAX_QUERY_CHARS = 500
MAX_SNIPPET_CHARS = 500


@dataclass(frozen=True)
class SearchResult:
    """One hit: what the model reads of it."""

    title: str
    url: str
    snippet: str


class SearchProvider(Protocol):
    """Where searches go (the GoAgent SearchProvider)."""

    async def search(self, query: str, max_results: int) -> list[SearchResult]: ...


class SearxngProvider:
    """A SearXNG-compatible JSON endpoint: `url`, else TOOLCRIB_BUILTIN_SEARCH_URL."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url

    def endpoint(self) -> httpx.URL:
        text = self.url or settings.TOOLCRIB_BUILTIN_SEARCH_URL
        if not text:
            raise Refusal(
                "no search provider is configured: an administrator sets "
                "TOOLCRIB_BUILTIN_SEARCH_URL"
            )
        return httpx.URL(text)

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        endpoint = self.endpoint()
        fetched = await fetch(
            method="GET",
            url=str(endpoint.copy_merge_params({"q": query, "format": "json"})),
            allowlist=Allowlist.parse([host_entry(endpoint)], private_names=True),
            limits=limits(),
            headers={"Accept": "application/json"},
        )
        if fetched.status != 200:
            raise Refusal(f"the search provider answered HTTP {fetched.status}")
        try:
            answer = json.loads(fetched.body)
        except ValueError as exc:
            raise Refusal("the search provider's answer is not JSON") from exc
        results = answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(results, list):
            raise Refusal("the search provider's answer has no list of results")
        hits = [_hit(item) for item in results if isinstance(item, dict)]
        return [hit for hit in hits if hit.url][:max_results]


def _hit(item: dict[str, Any]) -> SearchResult:
    snippet, _ = text_limit(str(item.get("content") or ""), MAX_SNIPPET_CHARS)
    return SearchResult(
        title=str(item.get("title") or ""),
        url=str(item.get("url") or ""),
        snippet=snippet,
    )


def max_results_of(asked: Any) -> int:
    """The model's number of results, within the administrator's cap."""
    cap = int(settings.TOOLCRIB_BUILTIN_SEARCH_MAX_RESULTS)
    if asked is None:
        return cap
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
        raise Refusal("max_results must be a whole number of at least 1")
    return min(asked, cap)


def web_search_with(provider: SearchProvider):
    """The search tool's function, over one provider."""

    async def web_search(query: str, max_results: int | None = None) -> dict:
        """Search the web and return the top results: title, URL and a snippet.

        Args:
            query: What to search for, as you would type it in a search engine.
            max_results: At most this many results (the administrator caps it).

        Returns:
            The results, best first.
        """
        if not isinstance(query, str) or not query.strip():
            raise Refusal("query must be the text to search for")
        if len(query) > MAX_QUERY_CHARS:
            raise Refusal(f"the query is longer than {MAX_QUERY_CHARS} characters")
        found = await provider.search(query.strip(), max_results_of(max_results))
        return {
            "status": "success",
            "query": query.strip(),
            "results": [asdict(hit) for hit in found],
            "count": len(found),
        }

    return web_search


class SearchToolset(BuiltinToolset):
    """Web search through the provider an administrator configured."""

    # A new catalog row is granted only: it reaches another host.
    catalog_defaults = {"default_policy": "granted_only"}

    def __init__(self, *, provider: SearchProvider | None = None, **kwargs: Any):
        tool = BuiltinTool(web_search_with(provider or SearxngProvider()), risk="read")
        super().__init__([tool], **kwargs)


toolset = SearchToolset()
