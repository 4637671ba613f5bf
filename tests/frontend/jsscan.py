"""Where a string of the pages' modules reaches a person, marked for translation or not.

Read from the tokens of jstokens.py: the tests (test_js_strings.py) look for the
places a string reaches a person (a text child of h(), textContent =, a title, a
toast, ...) outside gettext, and for tables translated as a module loads.
"""

import re

from tests.frontend.jstokens import REGEX_AFTER_WORDS, Token, tokenize

# The calls that mark a string for translation (frontend/static/frontend/i18n.js).
MARKERS = {"gettext", "ngettext", "pgettext", "npgettext", "gettext_noop"}
# Calls whose arguments [first:last] are text a person reads.
TEXT_CALLS = {
    "h": (2, None),  # dom.js: h(tag, attrs, ...children)
    "s": (2, None),
    "clear": (1, None),
    "empty": (0, None),
    "toast": (0, 1),  # toast(text, tone)
    "loading": (0, 1),
    "badge": (0, 1),
    "confirm": (0, 1),
    "alert": (0, 1),
    "prompt": (0, 1),
    "replaceChildren": (0, None),
    "prepend": (0, None),
}
# Properties (assigned, or keys of an attributes object) that hold text a person reads.
TEXT_PROPERTIES = {
    "textContent",
    "innerText",
    "title",
    "placeholder",
    "ariaLabel",
    "alt",
    "label",
}
TEXT_ATTRIBUTES = {
    "title",
    "placeholder",
    "aria-label",
    "alt",
    "label",
    "aria-description",
    "aria-roledescription",
}
COMPARISONS = {"===", "!==", "==", "!="}
LETTER = re.compile(r"[^\W\d_]")
# Prose: a capitalised word, then more words ("Not stopped: …", "Attach files").
PROSE = re.compile(r"^[^\w%]*[A-Z][a-z’']+[,:;.!?]?\s+\S*[a-z]")


def has_words(token: Token) -> bool:
    """A string or a template whose own text (not its holes) has a letter."""
    return any(
        LETTER.search(part)
        for part in (token.parts if token.kind == "template" else [token.value])
    )


def _matching(tokens: list[Token]) -> dict[int, int]:
    pairs, stack = {}, []
    for index, token in enumerate(tokens):
        if token.kind != "punct":
            continue
        if token.value in "([{":
            stack.append(index)
        elif token.value in ")]}" and stack:
            pairs[stack.pop()] = index
    return pairs


def _is_call(tokens: list[Token], index: int) -> bool:
    """Is the `(` (or `[`) at index a call (an index), not a group (an array)?"""
    if index == 0:
        return False
    before = tokens[index - 1]
    if before.kind == "name":
        return before.value not in REGEX_AFTER_WORDS | {
            "if",
            "while",
            "for",
            "switch",
            "catch",
        }
    return before.kind in {"str", "template"} or before.value in {")", "]", "?."}


class Scan:
    """The user-facing strings of one token list: marked (msgids) and not (findings)."""

    def __init__(self, tokens: list[Token]):
        self.tokens = tokens
        self.pairs = _matching(tokens)
        self.marked: set[int] = set()  # token indexes inside a marker's parentheses
        self.findings: dict[int, str] = {}  # token index -> why it reads as user-facing
        self._mark()
        self._sinks()
        self._prose()

    def _mark(self):
        for index, token in enumerate(self.tokens[:-1]):
            nxt = self.tokens[index + 1]
            if (
                token.kind == "name"
                and token.value in MARKERS
                and nxt.value == "("
                and index + 1 in self.pairs
            ):
                self.marked.update(range(index + 1, self.pairs[index + 1]))
            # console.* is for developers (and banned anyway); import paths are files.
            if (
                token.kind == "name"
                and token.value in {"import", "from", "export"}
                and nxt.kind == "str"
            ):
                self.marked.add(index + 1)

    def _args(self, open_index: int) -> list[tuple[int, int]]:
        """The [start, end) token ranges of a call's arguments."""
        close = self.pairs.get(open_index)
        if close is None:
            return []
        args, start, index = [], open_index + 1, open_index + 1
        while index < close:
            if index in self.pairs:
                index = self.pairs[index] + 1
                continue
            if self.tokens[index].value == ",":
                args.append((start, index))
                start = index + 1
            index += 1
        if start < close:
            args.append((start, close))
        return args

    def _expression_end(self, start: int) -> int:
        """Where an assigned value ends: a `;`, a `,` or a closing bracket at its depth."""
        index = start
        while index < len(self.tokens):
            if index in self.pairs:
                index = self.pairs[index] + 1
                continue
            token = self.tokens[index]
            if token.kind == "punct" and token.value in {";", ",", ")", "]", "}"}:
                return index
            if (
                index > start
                and token.line != self.tokens[index - 1].line
                and self.tokens[index - 1].kind != "punct"
                and token.kind != "punct"
            ):
                return index  # a new statement on the next line, no semicolon
            index += 1
        return index

    def _values(self, start: int, end: int, why: str):
        """Flag the strings that are the value of tokens[start:end] (its branches and groups)."""
        index = start
        while index < end:
            token = self.tokens[index]
            if index in self.pairs:
                close = self.pairs[index]
                chained = close + 1 < len(self.tokens) and self.tokens[
                    close + 1
                ].value in {".", "?.", "["}
                if (
                    token.value in "(["
                    and not _is_call(self.tokens, index)
                    and not chained
                ):
                    # A group, or an array of children.
                    self._values(index + 1, close, why)
                index = close + 1
                continue
            if (
                token.kind in {"str", "template"}
                and index not in self.marked
                and has_words(token)
            ):
                before = self.tokens[index - 1] if index else None
                after = self.tokens[index + 1] if index + 1 < len(self.tokens) else None
                compared = (before is not None and before.value in COMPARISONS) or (
                    after is not None and after.value in COMPARISONS | {"in", ".", "?."}
                )
                if not compared and not (after is not None and after.value == "["):
                    self.findings.setdefault(index, why)
            index += 1

    def _sinks(self):
        tokens = self.tokens
        for index, token in enumerate(tokens):
            nxt = tokens[index + 1] if index + 1 < len(tokens) else None
            if nxt is None:
                break
            if token.kind == "name" and token.value in TEXT_CALLS and nxt.value == "(":
                previous = tokens[index - 1].value if index else ""
                if token.value in {"replaceChildren", "prepend"} and previous not in {
                    ".",
                    "?.",
                }:
                    continue
                first, last = TEXT_CALLS[token.value]
                for start, end in self._args(index + 1)[first:last]:
                    self._values(start, end, f"{token.value}() text")
            elif (
                token.kind == "name"
                and token.value == "setAttribute"
                and nxt.value == "("
            ):
                args = self._args(index + 1)
                if (
                    len(args) == 2
                    and tokens[args[0][0]].kind == "str"
                    and tokens[args[0][0]].value in TEXT_ATTRIBUTES
                ):
                    self._values(*args[1], f"{tokens[args[0][0]].value} attribute")
            elif (
                token.kind == "name"
                and token.value in TEXT_PROPERTIES
                and nxt.value == "="
                and index
                and tokens[index - 1].value in {".", "?."}
            ):
                self._values(
                    index + 2, self._expression_end(index + 2), f".{token.value} ="
                )
            elif (
                token.kind in {"name", "str"}
                and token.value in TEXT_ATTRIBUTES
                and nxt.value == ":"
                and index
                and tokens[index - 1].value in {"{", ","}
            ):
                self._values(
                    index + 2,
                    self._expression_end(index + 2),
                    f"{token.value}: attribute",
                )

    def _prose(self):
        for index, token in enumerate(self.tokens):
            if (
                token.kind not in {"str", "template"}
                or index in self.marked
                or index in self.findings
            ):
                continue
            after = self.tokens[index + 1] if index + 1 < len(self.tokens) else None
            before = self.tokens[index - 1] if index else None
            if (
                after is not None
                and after.value == ":"
                and before is not None
                and before.value in {"{", ","}
            ):
                continue  # an object's key
            if (before is not None and before.value in COMPARISONS | {"case"}) or (
                after is not None and after.value in COMPARISONS
            ):
                continue  # a value compared with, not shown
            if PROSE.search(
                "X".join(token.parts) if token.kind == "template" else token.value
            ):
                self.findings[index] = "reads as prose"


def scan(tokens: list[Token]):
    """Findings (token, why) and marked strings, through template holes."""
    result = Scan(tokens)
    findings = [(tokens[i], why) for i, why in sorted(result.findings.items())]
    for token in tokens:
        for hole in token.holes:
            findings.extend(scan(hole))
    return findings


def unmarked(source: str):
    return scan(tokenize(source))


def msgids(source: str):
    """(context, msgid, plural) of every literal gettext/ngettext/pgettext/npgettext call."""
    found = []

    def visit(tokens):
        for index, token in enumerate(tokens[:-2]):
            if (
                token.kind != "name"
                or token.value not in MARKERS
                or tokens[index + 1].value != "("
            ):
                continue
            if index and tokens[index - 1].value in {".", "function"}:
                continue
            literal = [t for t in tokens[index + 2 : index + 8]]
            strings = []
            for t in literal:
                if t.kind == "str":
                    strings.append(t.value)
                elif t.value != ",":
                    break
            if token.value in {"gettext", "gettext_noop"} and strings:
                found.append(("", strings[0], ""))
            elif token.value == "ngettext" and len(strings) >= 2:
                found.append(("", strings[0], strings[1]))
            elif token.value == "pgettext" and len(strings) >= 2:
                found.append((strings[0], strings[1], ""))
            elif token.value == "npgettext" and len(strings) >= 3:
                found.append((strings[0], strings[1], strings[2]))
        for token in tokens:
            for hole in token.holes:
                visit(hole)

    visit(tokenize(source))
    return found


def import_time_calls(tokens: list[Token]) -> list[Token]:
    """The gettext-family calls a module makes as it loads (outside any function).

    A string translated then is fixed before the page's catalog may be there: mark
    tables with gettext_noop and translate where they are read.
    """
    found = []
    # One level per open bracket: is it a function's block, and has a `=>` deferred the rest?
    levels = [{"block": False, "deferred": False, "table": False}]
    for index, token in enumerate(tokens):
        before = tokens[index - 1] if index else None
        value = token.value if token.kind == "punct" else None
        if value in {"(", "[", "{"}:
            block = (
                value == "{"
                and before is not None
                and (
                    before.value in {")", "=>"}
                    or (
                        before.kind == "name"
                        and before.value in {"else", "try", "finally", "do", "static"}
                    )
                    or any(
                        t.value == "class" for t in tokens[max(0, index - 4) : index]
                    )
                )
            )
            levels.append(
                {
                    "block": block,
                    "deferred": False,
                    "table": value in "[{" and not block,
                }
            )
        elif value in {")", "]", "}"} and len(levels) > 1:
            if levels.pop()["block"]:
                # A function's body ended: its statement too.
                levels[-1]["deferred"] = False
        elif value == "=>":
            levels[-1]["deferred"] = True
        elif value in {",", ";"}:
            levels[-1]["deferred"] = False
        elif token.kind == "name" and token.value == "function":
            levels[-1]["deferred"] = True
        elif token.kind == "name" and token.value in MARKERS - {"gettext_noop"}:
            nxt = tokens[index + 1] if index + 1 < len(tokens) else None
            if (
                nxt is not None
                and nxt.value == "("
                and not (before is not None and before.value in {".", "function"})
            ):
                # In a table (an object or array literal) built as the module loads.
                loading = not any(
                    level["block"] or level["deferred"] for level in levels
                )
                if loading and any(level["table"] for level in levels):
                    found.append(token)
    return found
