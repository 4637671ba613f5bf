"""URLs as a grant's condition judges them: one spelling for one destination.

`normalize_url` gives the one spelling of an absolute http(s) URL that a condition
compares (toolsets.grant_conditions), and that the built-in fetch tools then
request, so what was judged is what is fetched:

- parsed as the WHATWG URL Standard says (ada-url: the parser of browsers and
  Node.js): scheme and host in lower case, the host in its IDNA (ASCII) form, an
  IPv4 address in dotted decimal, the scheme's default port dropped
  (`http://host:80/` is `http://host/`), `.` and `..` segments resolved, `%2e`
  counting as a dot;
- in the path, percent-encoded unreserved characters decoded (`%7E` is `~`) and
  other escapes in upper case;
- the fragment dropped: it never leaves the client.

Refused (NotNormalizable), since no one spelling of them means one destination:
- anything but an absolute http:// or https:// URL with a host;
- white space, a control character or a backslash anywhere: parsers strip, keep or
  turn them into `/` each their own way;
- user info before the host (`http://host@evil/`);
- in the path: an empty segment (`/ok//../page`, which a server that merges
  slashes reads as `/page`), an encoded `/`, `\\` or control character (`..%2F`,
  a step up for a server that decodes before it routes), a `%` that starts no
  escape, and a dot segment with parameters (`..;`, which Java servers read as
  `..`).

`is_within` compares a URL with a prefix on a path segment boundary.
"""

import re
import string
from functools import lru_cache
from urllib.parse import urlsplit

from ada_url import URL

SCHEMES = frozenset({"http", "https"})
# White space (Unicode's too), control characters and backslashes.
UNSAFE = re.compile(r"[\x00-\x1f\x7f\\]|\s")
ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
ENCODED_SEPARATOR = re.compile(r"%(2f|5c|[01][0-9a-f]|7f)", re.IGNORECASE)
STRAY_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
DOT_WITH_PARAMETERS = re.compile(r"(\.|%2e){1,2}(;|%3b)", re.IGNORECASE)


class NotNormalizable(ValueError):
    """A URL with no one spelling a condition can judge; the message says why."""


def normalize_url(text: str) -> str:
    """The one spelling of an absolute http(s) URL; NotNormalizable says why not."""
    if UNSAFE.search(text):
        raise NotNormalizable("it has white space, a control character or a backslash")
    try:
        written = urlsplit(text)  # as written, before a parser resolves anything
    except ValueError:
        raise NotNormalizable("it cannot be parsed") from None
    if written.scheme.lower() not in SCHEMES:
        raise NotNormalizable("it is not an http:// or https:// URL")
    if not written.netloc:
        raise NotNormalizable("it has no host")
    if "@" in written.netloc:
        raise NotNormalizable("it has user info before its host")
    _check_path(written.path)
    try:
        url = URL(text)
    except ValueError:
        raise NotNormalizable("it cannot be parsed") from None
    path = ESCAPE.sub(_unescaped, url.pathname)
    if any(segment in (".", "..") for segment in path.split("/")):
        raise NotNormalizable("it has a dot segment that cannot be resolved")
    return f"{url.protocol}//{url.host}{path}{url.search}"


def _check_path(path: str) -> None:
    if "//" in path:
        raise NotNormalizable("it has an empty path segment (//)")
    if ENCODED_SEPARATOR.search(path):
        raise NotNormalizable(
            "it has an encoded /, \\ or control character in its path"
        )
    if STRAY_PERCENT.search(path):
        raise NotNormalizable("it has a % that starts no escape in its path")
    if any(DOT_WITH_PARAMETERS.match(segment) for segment in path.split("/")):
        raise NotNormalizable("it has a dot segment with parameters (..;)")


def _unescaped(escape: re.Match[str]) -> str:
    character = chr(int(escape.group(1), 16))
    return character if character in UNRESERVED else escape.group(0).upper()


@lru_cache(maxsize=512)
def url_prefix(text: str) -> str:
    """A prefix written as a URL, normalized; a bare `http://` or `https://` as is.

    Raises:
        NotNormalizable: The prefix is no URL that normalizes.
    """
    if text.lower() in ("http://", "https://"):
        return text.lower()
    return normalize_url(text)


def is_within(url: str, prefix: str) -> bool:
    """Whether a normalized URL is the prefix or below it: the prefix ends where a
    path segment does (`/ok` covers `/ok`, `/ok/x` and `/ok?q`, not `/okay`), unless
    it ends with `/` or has a query, where it is compared as text."""
    if not url.startswith(prefix):
        return False
    if len(url) == len(prefix) or prefix.endswith("/") or "?" in prefix:
        return True
    return url[len(prefix)] in "/?"


def looks_like_url(text: str) -> bool:
    """Whether a condition's text is written as an http(s) URL."""
    return text[:8].lower().startswith(("http://", "https://"))
