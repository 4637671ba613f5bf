"""Every word a person reads in a template is marked for translation (docs/i18n.md).

Each template of the apps is read as Django reads it: what {% translate %} and
{% blocktranslate %} hold is marked, and so is what a variable or a tag prints;
what is left, text between tags and the attributes a person reads or hears
(title, placeholder, aria-label, alt), must hold no letter, but for the names in
ALLOWED. <script> and <style> bodies are code, not words.
"""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
TEMPLATE_DIRS = [
    "frontend/templates",
    "agents/templates",
    "toolsets/templates",
    "evals/templates",
]
# Names and symbols, not words: the same in every language. "A" and "D" are the
# access matrix's toggles (allow, deny), as access.js draws them.
ALLOWED = {"Toolcrib", "A", "D"}
READ_ATTRIBUTES = {"title", "placeholder", "aria-label", "alt"}
LETTER = re.compile(r"[^\W\d_]")

_COMMENTS = re.compile(r"{%\s*comment\s*%}.*?{%\s*endcomment\s*%}|{#.*?#}", re.S)
_BLOCKS = re.compile(
    r"{%\s*blocktrans(?:late)?\b.*?%}.*?{%\s*endblocktrans(?:late)?\s*%}", re.S
)
# A block that names a CSS class (body_class, bodyclass) holds no words.
_CLASS_BLOCKS = re.compile(r"{%\s*block\s+\w*class\w*\s*%}.*?{%\s*endblock\s*%}", re.S)
_TAGS = re.compile(r"{%.*?%}|{{.*?}}", re.S)
_CODE = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.S | re.I)


def templates() -> list[Path]:
    found = []
    for folder in TEMPLATE_DIRS:
        base = ROOT / folder
        if base.is_dir():
            found += sorted(p for p in base.rglob("*") if p.suffix in {".html", ".txt"})
    return found


class _Words(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        for name, value in attrs:
            if name in READ_ATTRIBUTES and value:
                self._check(value)

    def handle_data(self, data: str) -> None:
        self._check(data)

    def _check(self, text: str) -> None:
        text = " ".join(text.split())
        words = [word for word in re.split(r"[^\w]+", text) if word]
        if LETTER.search(text) and not set(words) <= ALLOWED:
            self.words.append(text)


def unmarked(source: str) -> list[str]:
    """The texts of a template left outside the translation tags."""
    text = _COMMENTS.sub("", source)
    text = _BLOCKS.sub("", text)
    text = _CLASS_BLOCKS.sub("", text)
    # A tag in an attribute's value, or between words: gone, its surroundings stay.
    text = _TAGS.sub("", text)
    text = _CODE.sub("", text)
    parser = _Words()
    parser.feed(text)
    parser.close()
    return parser.words


def test_the_checker_finds_an_unmarked_word_and_passes_marked_ones():
    assert unmarked("<p>Hello</p>") == ["Hello"]
    assert unmarked('<input placeholder="Find a user">') == ["Find a user"]
    assert unmarked('<p>{% translate "Hello" %}</p>') == []
    assert (
        unmarked("<p>{% blocktranslate %}Hi {{ name }}{% endblocktranslate %}</p>")
        == []
    )
    assert unmarked("<p>{{ user.name }}</p><script>let a = 1;</script>") == []
    assert unmarked("<span>Toolcrib</span> · {# a note #}") == []


@pytest.mark.parametrize(
    "path", templates(), ids=lambda path: str(path.relative_to(ROOT))
)
def test_every_text_of_a_template_is_marked_for_translation(path):
    words = unmarked(path.read_text(encoding="utf-8"))
    assert not words, f"{path.relative_to(ROOT)}: mark for translation: {words}"
