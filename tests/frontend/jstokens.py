"""A small JavaScript tokenizer for the translation tests (jsscan.py, test_js_strings.py).

It knows what the pages' modules use: comments, '…' and "…" strings, template
literals (with ${…} holes, nested), regular expression literals, numbers, names and
punctuation. It is not a parser: the tests read the token stream for the places a
string reaches a person (a text child of h(), textContent =, a title, a toast, ...).
"""

import re
from bisect import bisect_right
from dataclasses import dataclass, field

NAME = re.compile(r"[A-Za-z_$][\w$]*")
NUMBER = re.compile(r"\d[\w.]*|\.\d[\w.]*")
PUNCTUATORS = sorted(
    """>>>= ... === !== **= <<= >>= >>> &&= ||= ??= => == != <= >= && || ?? ?. ++ -- += -= *= /= %=
    &= |= ^= << >> ** { } ( ) [ ] ; , < > + - * / % & | ^ ! ~ ? : = . @ #""".split(),
    key=len,
    reverse=True,
)
# After these a `/` starts a regular expression, not a division.
REGEX_AFTER_WORDS = {
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "yield",
    "await",
}


@dataclass
class Token:
    kind: str  # name, num, str, template, regex, punct
    value: str
    line: int
    start: int = 0  # offsets in the source, for messages and tools
    end: int = 0
    # A template literal: its text parts, and the tokens of each ${…} hole.
    parts: list[str] = field(default_factory=list)
    holes: list[list["Token"]] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)  # each hole's source

    @property
    def text(self) -> str:
        """A string's value, or a template's text with its holes as %s."""
        return "%s".join(self.parts) if self.kind == "template" else self.value


class Tokenizer:
    def __init__(self, source: str):
        self.src = source
        self.pos = 0
        self.newlines = [i for i, ch in enumerate(source) if ch == "\n"]

    def line(self, pos: int) -> int:
        return bisect_right(self.newlines, pos - 1) + 1

    def tokens(self, until_brace: bool = False) -> list[Token]:
        """Tokens up to the end, or up to the `}` closing a template's hole."""
        out: list[Token] = []
        depth = 0
        src = self.src
        while self.pos < len(src):
            ch = src[self.pos]
            if ch in " \t\r\n":
                self.pos += 1
            elif src.startswith("//", self.pos):
                end = src.find("\n", self.pos)
                self.pos = len(src) if end < 0 else end
            elif src.startswith("/*", self.pos):
                end = src.find("*/", self.pos + 2)
                self.pos = len(src) if end < 0 else end + 2
            elif ch in "'\"":
                out.append(self.string(ch))
            elif ch == "`":
                out.append(self.template())
            elif ch == "/" and self.regex_allowed(out):
                out.append(self.regex())
            elif NAME.match(src, self.pos):
                match = NAME.match(src, self.pos)
                out.append(
                    Token(
                        "name",
                        match.group(),
                        self.line(self.pos),
                        self.pos,
                        match.end(),
                    )
                )
                self.pos = match.end()
            elif NUMBER.match(src, self.pos):
                match = NUMBER.match(src, self.pos)
                out.append(
                    Token(
                        "num", match.group(), self.line(self.pos), self.pos, match.end()
                    )
                )
                self.pos = match.end()
            else:
                punct = next(
                    (p for p in PUNCTUATORS if src.startswith(p, self.pos)), ch
                )
                if until_brace and punct == "}" and depth == 0:
                    self.pos += 1
                    return out
                depth += {"{": 1, "}": -1}.get(punct, 0)
                out.append(
                    Token(
                        "punct",
                        punct,
                        self.line(self.pos),
                        self.pos,
                        self.pos + len(punct),
                    )
                )
                self.pos += len(punct)
        return out

    @staticmethod
    def regex_allowed(out: list[Token]) -> bool:
        if not out:
            return True
        last = out[-1]
        if last.kind == "name":
            return last.value in REGEX_AFTER_WORDS
        if last.kind == "punct":
            return last.value not in {")", "]", "}", "++", "--"}
        return False

    def string(self, quote: str) -> Token:
        start = self.pos
        self.pos += 1
        chars = []
        while self.src[self.pos] != quote:
            if self.src[self.pos] == "\\":
                chars.append(self.escape())
            else:
                chars.append(self.src[self.pos])
                self.pos += 1
        self.pos += 1
        return Token("str", "".join(chars), self.line(start), start, self.pos)

    def escape(self) -> str:
        nxt = self.src[self.pos + 1]
        self.pos += 2
        if nxt == "u":
            if self.src[self.pos] == "{":
                end = self.src.index("}", self.pos)
                code = self.src[self.pos + 1 : end]
                self.pos = end + 1
            else:
                code = self.src[self.pos : self.pos + 4]
                self.pos += 4
            return chr(int(code, 16))
        if nxt == "x":
            code = self.src[self.pos : self.pos + 2]
            self.pos += 2
            return chr(int(code, 16))
        if nxt == "\n":
            return ""
        return {
            "n": "\n",
            "t": "\t",
            "r": "\r",
            "0": "\0",
            "b": "\b",
            "f": "\f",
            "v": "\v",
        }.get(nxt, nxt)

    def template(self) -> Token:
        start = self.pos
        self.pos += 1
        parts, holes, chars, spans = [], [], [], []
        while self.src[self.pos] != "`":
            if self.src[self.pos] == "\\":
                chars.append(self.escape())
            elif self.src.startswith("${", self.pos):
                parts.append("".join(chars))
                chars = []
                self.pos += 2
                begin = self.pos
                holes.append(self.tokens(until_brace=True))
                spans.append((begin, self.pos - 1))
            else:
                chars.append(self.src[self.pos])
                self.pos += 1
        parts.append("".join(chars))
        self.pos += 1
        return Token(
            "template", "`", self.line(start), start, self.pos, parts, holes, spans
        )

    def regex(self) -> Token:
        start = self.pos
        self.pos += 1
        in_class = False
        while True:
            ch = self.src[self.pos]
            if ch == "\\":
                self.pos += 2
                continue
            if ch == "[":
                in_class = True
            elif ch == "]":
                in_class = False
            elif ch == "/" and not in_class:
                break
            self.pos += 1
        self.pos += 1
        match = NAME.match(self.src, self.pos)
        if match:
            self.pos = match.end()
        return Token(
            "regex", self.src[start : self.pos], self.line(start), start, self.pos
        )


def tokenize(source: str) -> list[Token]:
    return Tokenizer(source).tokens()


def walk(tokens: list[Token]):
    """Every token, the tokens of template holes included (depth first)."""
    for token in tokens:
        yield token
        for hole in token.holes:
            yield from walk(hole)
