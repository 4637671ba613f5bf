"""The pages never turn a string into HTML except through markdown.js.

Every page module builds its DOM from text nodes (frontend/static/frontend/dom.js);
the one place text becomes HTML is markdown.js, which shows raw HTML as text and
sanitizes marked's output with DOMPurify. A module that assigned `innerHTML`, or parsed
Markdown with marked directly, would bypass both. That the sanitizing holds in a real
browser, for payloads in model text, tool results and artifact names, is proven in
tests/browser/test_security_xss.py (Playwright tests cannot run in this folder:
scripts/test.sh runs it with pytest-asyncio, which sync Playwright cannot share).
"""

import re
from pathlib import Path

import pytest

MODULES = Path(__file__).resolve().parents[2] / "frontend" / "static" / "frontend"
HTML_SINKS = re.compile(
    r"\.(innerHTML|outerHTML)\s*[+]?=|insertAdjacentHTML|document\.write"
    r"|createContextualFragment|\.setHTMLUnsafe|parseHTMLUnsafe"
)
MARKED_IMPORT = re.compile(r"""from\s+["'][^"']*vendor/marked""")


def page_modules() -> list[Path]:
    return sorted(MODULES.glob("*.js"))


def test_the_page_modules_are_found():
    names = {path.name for path in page_modules()}
    assert {"markdown.js", "timeline.js", "dom.js"} <= names


@pytest.mark.parametrize("path", page_modules(), ids=lambda path: path.name)
def test_no_page_module_writes_an_html_string_into_the_page(path):
    found = [
        f"{path.name}:{number}: {line.strip()}"
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if HTML_SINKS.search(line)
    ]
    assert found == []


def test_only_markdown_js_parses_markdown():
    importers = [
        path.name for path in page_modules() if MARKED_IMPORT.search(path.read_text())
    ]
    assert importers == ["markdown.js"]
