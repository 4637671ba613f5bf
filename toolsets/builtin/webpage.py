"""The webpage toolset: fetch an allowlisted page and return its readable text.

It fetches the way the http toolset does (same allowlist, size, time and redirect
limits: TOOLCRIB_BUILTIN_HTTP_*), then keeps what a reader sees: the title, the
headings and the text blocks, without scripts, styles or markup.
TOOLCRIB_BUILTIN_WEBPAGE_MAX_CHARS caps the text returned;
TOOLCRIB_BUILTIN_WEBPAGE_USER_AGENT, when set, is the User-Agent it sends (the
GoAgent WebScraper's userAgent). A grant's condition on `url` holds for every hop,
as for the http toolset.
"""

import re
from html.parser import HTMLParser
from typing import Any

from django.conf import settings
from google.adk.tools import ToolContext

from toolsets.builtin.base import BuiltinTool, BuiltinToolset, text_limit
from toolsets.builtin.http import allowlist, limits
from toolsets.destinations import Destinations, OutsideCondition
from toolsets.net import fetch
from toolsets.refusals import Refusal

PAGE_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/plain", ""})
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Elements whose text nobody reads.
SKIPPED = frozenset(
    {"script", "style", "noscript", "template", "svg", "iframe", "object"}
)
# Elements that end a block of text.
BLOCKS = frozenset(
    {
        *HEADINGS,
        "p", "div", "li", "ul", "ol", "br", "hr", "section", "article", "main",
        "header", "footer", "nav", "aside", "blockquote", "pre", "table", "tr",
        "td", "th", "dd", "dt", "dl", "figcaption", "form", "body", "title",
    }
)  # fmt: skip
SPACES = re.compile(r"\s+")


class ReadableText(HTMLParser):
    """Collects the title, the headings and the text blocks of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.headings: list[str] = []
        self.blocks: list[str] = []
        self._skip_depth = 0
        self._in_title = False
        self._heading: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
            return
        if tag in SKIPPED:
            self._skip_depth += 1
        if tag in BLOCKS:
            self._flush()
        if tag in HEADINGS:
            self._heading = tag

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
            return
        if tag in SKIPPED and self._skip_depth:
            self._skip_depth -= 1
        if tag in BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title = clean(self.title + " " + data)
        elif not self._skip_depth:
            self._text.append(data)

    def close(self) -> None:
        super().close()
        self._flush()

    def _flush(self) -> None:
        text = clean(" ".join(self._text))
        self._text = []
        heading, self._heading = self._heading, None
        if not text:
            return
        if heading:
            self.headings.append(text)
            self.blocks.append("#" * int(heading[1]) + " " + text)
        else:
            self.blocks.append(text)


def clean(text: str) -> str:
    return SPACES.sub(" ", text).strip()


def readable(html: str) -> ReadableText:
    """Parse a page into its readable parts."""
    parser = ReadableText()
    parser.feed(html)
    parser.close()
    return parser


async def fetch_webpage(url: str, tool_context: ToolContext | None = None) -> dict:
    """Fetch a web page and return its readable text: title, headings, paragraphs.

    Only hosts on the administrator's allowlist can be reached, redirects
    included. Headings in the text are marked with # like Markdown.

    Args:
        url: An absolute http:// or https:// URL of an HTML page.

    Returns:
        The final URL, the page title, its headings and its text.
    """
    if not isinstance(url, str) or not url.strip():
        raise Refusal("url must be an absolute http:// or https:// URL")
    destinations = Destinations.of(tool_context, "url")
    try:
        fetched = await fetch(
            method="GET",
            url=destinations.start(url.strip()),
            allowlist=allowlist(),
            limits=limits(),
            headers=page_headers(),
            hop=destinations.hop,
        )
    except OutsideCondition as outside:
        raise Refusal(str(outside)) from None
    if fetched.status >= 400:
        raise Refusal(f"the page answered HTTP {fetched.status}")
    if fetched.content_type not in PAGE_TYPES:
        raise Refusal(f"{fetched.url} is {fetched.content_type}, not a web page")
    return page_answer(fetched.url, fetched.content_type, fetched.text())


def page_headers() -> dict[str, str]:
    """What a page fetch sends: what it accepts, and the administrator's User-Agent."""
    headers = {"Accept": "text/html,application/xhtml+xml;q=0.9,text/plain;q=0.5"}
    if settings.TOOLCRIB_BUILTIN_WEBPAGE_USER_AGENT:
        headers["User-Agent"] = settings.TOOLCRIB_BUILTIN_WEBPAGE_USER_AGENT
    return headers


def page_answer(url: str, content_type: str, body: str) -> dict[str, Any]:
    """What the model reads about a page."""
    if content_type == "text/plain":
        title, headings, blocks = "", [], [clean(body)]
    else:
        page = readable(body)
        title, headings, blocks = page.title, page.headings, page.blocks
    text, truncated = text_limit(
        "\n\n".join(blocks), int(settings.TOOLCRIB_BUILTIN_WEBPAGE_MAX_CHARS)
    )
    return {
        "status": "success",
        "url": url,
        "title": title,
        "headings": headings,
        "text": text,
        "truncated": truncated,
    }


class WebpageToolset(BuiltinToolset):
    """Read an allowlisted web page as plain text: title, headings, paragraphs."""

    # A new catalog row is granted only: it reaches other hosts (issue 14).
    catalog_defaults = {"default_policy": "granted_only"}

    def __init__(self, **kwargs: Any) -> None:
        tool = BuiltinTool(fetch_webpage, risk="read", urls=["url"])
        super().__init__([tool], **kwargs)


toolset = WebpageToolset()
