"""Every string the pages' modules show a person goes through the translation catalog.

The scanner (jsscan.py) reads each module's tokens, comments and template literals
included, and finds the strings that reach a person: a text child of h(), what is
assigned to textContent or title, an aria-label or placeholder, a toast(), an
empty()/loading() state, confirm(), and any literal that reads as prose. Each must be
inside gettext/ngettext/pgettext (or gettext_noop for a table read later). And the
German catalog (locale/de/LC_MESSAGES/djangojs.po) translates every one of them.
"""

import re
from pathlib import Path

import pytest

from tests.frontend.jsscan import import_time_calls, msgids, unmarked
from tests.frontend.jstokens import tokenize

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "frontend" / "static" / "frontend"
MODULES = sorted(STATIC.glob("*.js"))
CATALOG = ROOT / "locale" / "de" / "LC_MESSAGES" / "djangojs.po"

# Strings in a text position that are not words to translate: examples of what to
# type (a URL, a header, JSON), a version number, a glyph, JSON's own null.
NOT_WORDS = {
    ("access.js", '{"timeout": 10, "retries": 2}'),
    ("agentversions.js", "v%s"),
    ("evalruns.js", " v%s"),
    ("jsonview.js", "null"),
    ("models.js", "http://localhost:8000/v1"),
    ("panels.js", "v%s"),
    ("timeline.js", "ƒ"),
    ("timeline.js", "v%s"),
    ("tokens.js", "%s/mcp"),
    ("toolservers.js", "API_KEY=…"),
    ("toolservers.js", "https://tools.example.com/mcp"),
    ("toolservers.js", "https://auth.example.com"),
    ("toolservers.js", "X-Api-Key"),
}


def findings(source: str, name: str = "test.js") -> list[str]:
    return [
        f"{name}:{token.line}: {token.text!r} ({why})"
        for token, why in unmarked(source)
        if (name, token.text) not in NOT_WORDS
    ]


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_every_string_a_person_reads_is_marked(module):
    assert findings(module.read_text(), module.name) == []


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_no_table_is_translated_as_the_module_loads(module):
    """A table built at import time holds gettext_noop()s, translated where read."""
    found = import_time_calls(tokenize(module.read_text()))

    assert [f"{module.name}:{token.line}" for token in found] == []


@pytest.mark.parametrize(
    "source, expected",
    [
        ('h("button", {}, "Stop");', ["'Stop' (h() text)"]),
        ('h("p", { class: "note" }, cond ? "Yes" : `No ${x}`);', ["'Yes'", "'No %s'"]),
        ('el.textContent = "Saved.";', ["'Saved.'"]),
        ("el.title = `Open ${name}`;", ["'Open %s'"]),
        (
            'h("input", { placeholder: "Username", "aria-label": "Who" });',
            ["'Username'", "'Who'"],
        ),
        ('toast(`Not stopped: ${error.message}`, "bad");', ["'Not stopped: %s'"]),
        ('button.setAttribute("aria-label", "Close");', ["'Close'"]),
        (
            'clear(box, empty("No sessions yet", "Start one."));',
            ["'No sessions yet'", "'Start one.'"],
        ),
        ('if (!confirm("Delete it?")) return;', ["'Delete it?'"]),
        (
            'const WORDS = { gone: "That is gone, or not yours." };',
            ["'That is gone, or not yours.'"],
        ),
        ("h('td', {}, [\"Name\", x]);", ["'Name'"]),
        # A quote in a comment or a regular expression does not end the scan.
        ('// it\'s a comment\nh("p", {}, "Shown");', ["'Shown'"]),
        ('if (/["\']/.test(x)) toast("After a regex");', ["'After a regex'"]),
        ("el.title = `a ${`nested ${x}`} b`;", ["'a %s b'"]),
    ],
)
def test_the_scanner_finds_unmarked_text(source, expected):
    found = findings(source)

    assert len(found) == len(expected), found
    for line, text in zip(found, expected, strict=True):
        assert text in line


@pytest.mark.parametrize(
    "source",
    [
        'h("button", {}, gettext("Stop"));',
        'h("p", {}, interpolate(gettext("Not stopped: %(error)s"), { error }, true));',
        'el.textContent = ngettext("%(n)s run", "%(n)s runs", n);',
        'h("input", { class: "button ghost small", id: "agent-name", type: "text" });',
        'if (status === "Running now") go();',
        '// h("p", {}, "A comment is not text")\n/* toast("Nor this") */',
        'api(`/api/sessions/${id}/`, { method: "POST" });',
        'const pattern = /Not a "string" here/; el.textContent = name;',
        'const WORDS = { gone: gettext_noop("That is gone, or not yours.") };',
        'import { h } from "./dom.js";',
        'h("span", { class: "sep" }, " · ", "—");',
    ],
)
def test_the_scanner_passes_marked_and_technical_strings(source):
    assert findings(source) == []


def test_import_time_translation_is_found():
    source = 'const A = { x: gettext("Now") };\nfunction f() { return { y: gettext("Later") }; }\nconst g = () => [gettext("Later")];'

    assert [t.line for t in import_time_calls(tokenize(source))] == [1]


# --- The German catalog ---------------------------------------------------------------


def read_po(path: Path) -> list[dict]:
    """The entries of a .po file: context, msgid, plural, msgstrs, flags."""
    entries, entry, field = [], None, None

    def unquote(text):
        return re.sub(
            r"\\(.)",
            lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)),
            text[1:-1],
        )

    for line in [*path.read_text().splitlines(), ""]:
        line = line.strip()
        if not line:
            if entry is not None:
                entries.append(entry)
            entry, field = None, None
            continue
        if entry is None:
            entry = {
                "msgctxt": "",
                "msgid": "",
                "msgid_plural": "",
                "msgstr": {},
                "flags": set(),
            }
        if line.startswith("#,"):
            entry["flags"].update(flag.strip() for flag in line[2:].split(","))
        elif line.startswith("#"):
            continue
        elif line.startswith('"'):
            if isinstance(field, tuple):
                entry["msgstr"][field[1]] += unquote(line)
            else:
                entry[field] += unquote(line)
        else:
            keyword, _, value = line.partition(" ")
            match = re.fullmatch(r"msgstr\[(\d+)\]", keyword)
            if match or keyword == "msgstr":
                field = ("msgstr", int(match.group(1)) if match else 0)
                entry["msgstr"][field[1]] = unquote(value)
            else:
                field = keyword
                entry[field] = unquote(value)
    return [e for e in entries if e["msgid"]]  # the header has an empty msgid


def js_messages() -> set[tuple[str, str, str]]:
    return {found for module in MODULES for found in msgids(module.read_text())}


PLACEHOLDER = re.compile(r"%\((\w+)\)s|%s")


def test_the_german_catalog_translates_every_string_of_the_modules():
    catalog = {
        (e["msgctxt"], e["msgid"], e["msgid_plural"]): e for e in read_po(CATALOG)
    }

    missing = sorted(m[1] for m in js_messages() if m not in catalog)
    assert missing == []


def test_the_german_catalog_has_no_fuzzy_or_empty_translation():
    entries = read_po(CATALOG)

    assert [e["msgid"] for e in entries if "fuzzy" in e["flags"]] == []
    assert [e["msgid"] for e in entries if not all(e["msgstr"].values())] == []
    assert [
        e["msgid"] for e in entries if e["msgid_plural"] and len(e["msgstr"]) != 2
    ] == []


def test_the_german_translations_keep_every_placeholder():
    for entry in read_po(CATALOG):
        expected = sorted(PLACEHOLDER.findall(entry["msgid_plural"] or entry["msgid"]))
        for index, text in entry["msgstr"].items():
            names = sorted(PLACEHOLDER.findall(text))
            # A singular may say "one" in words instead of %(n)s.
            if entry["msgid_plural"] and index == 0:
                assert set(names) <= set(expected), (entry["msgid"], text)
            else:
                assert names == expected, (entry["msgid"], text)


def test_the_scanner_reads_the_calls_the_catalog_is_built_from():
    source = 'gettext("One"); ngettext("%(n)s run", "%(n)s runs", n); pgettext("status", "ok"); gettext_noop("Later");'

    assert msgids(source) == [
        ("", "One", ""),
        ("", "%(n)s run", "%(n)s runs"),
        ("status", "ok", ""),
        ("", "Later", ""),
    ]
