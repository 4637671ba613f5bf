"""Conditions on a call's arguments that an allow grant carries: data, never code.

A tool grant that allows may narrow the allow to calls whose arguments hold a
condition: per argument, JSON Schema's `enum`, `pattern`, `minimum` and `maximum`,
and Toolcrib's `prefix`:

    {"url": {"prefix": "https://wiki.corp.example/team"}}
    {"path": {"prefix": "reports/"}}
    {"amount": {"maximum": 1000}}

A value holds a keyword whole, as what it is:
- `pattern` matches the whole value (`re.fullmatch`: `$` lets no trailing newline
  through), with `\\d`, `\\w` and `\\s` meaning ASCII only, as in JSON Schema;
- `prefix` and `pattern` refuse a value with a NUL character;
- `minimum` and `maximum` refuse a number that is not finite;
- `enum` is JSON's equality (`true` is not 1).

A condition on a URL is judged on the normalized URL (toolsets.urls: scheme, host,
port, resolved path), a `prefix` there ends on a path segment boundary, and a value
that is no http(s) URL that normalizes is outside it. An argument is a URL when its
tool says so (its schema's `format` is a URI's, or the tool's custom_metadata lists
it under `url_arguments`, as the built-in http and webpage tools do), or when its
condition is written in URLs (its prefix or an enum item starts with http:// or
https://). The fetch tools judge every redirect hop by the same condition
(toolsets.destinations).

Every keyword of every argument named must hold; an argument the call leaves out
fails its condition (a default the tool would fill in is not seen here). A grant's
`otherwise` says what a call outside it gets: `deny` (refused, audited `denied`,
with feedback naming the condition, so the model can retry within it) or
`approval` (held for a person's approval, as the catalog's requires_approval).

A condition is checked when it is saved, against the tool's argument schema
(`check_condition`): an argument the tool does not have, a keyword that does not
fit the argument's type, a bad regular expression, a URL that does not normalize
are refused. Only an allow on one tool carries one: a toolset's tools have
different arguments, and a deny narrowed by a condition would widen access where
the condition fails.
"""

import math
import re
from collections.abc import Collection, Mapping
from functools import lru_cache
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    model_validator,
)

from toolsets.urls import (
    NotNormalizable,
    is_within,
    looks_like_url,
    normalize_url,
    url_prefix,
)

MAX_ARGUMENTS = 20
MAX_ENUM = 200
MAX_TEXT = 500
# What a tool's schema says a URL argument is (JSON Schema's formats, and OpenAPI's).
URL_FORMATS = frozenset({"uri", "uri-reference", "iri", "iri-reference", "url"})
# The arguments a tool's code declares URLs: in its custom_metadata, under this key.
URL_ARGUMENTS = "url_arguments"

Scalar = str | int | float | bool | None
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]


class ConditionError(ValueError):
    """A condition that does not fit its tool; `errors` are its problems, in words."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


def _compiles(pattern: str) -> str:
    # Plainly, as stored conditions were: check_condition holds a new one to ASCII.
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression ({exc})") from None
    return pattern


class ArgumentCondition(BaseModel):
    """What one argument must be: every keyword given must hold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enum: Annotated[list[Scalar], Field(min_length=1, max_length=MAX_ENUM)] | None = (
        None
    )
    pattern: Annotated[Text, AfterValidator(_compiles)] | None = None
    prefix: Text | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None

    @model_validator(mode="after")
    def _one_keyword_at_least(self) -> "ArgumentCondition":
        if not self.keywords():
            raise ValueError(
                "give at least one of enum, pattern, prefix, minimum, maximum"
            )
        if (
            self.minimum is not None
            and self.maximum is not None
            and self.minimum > self.maximum
        ):
            raise ValueError("minimum is above maximum")
        return self

    def keywords(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)

    def failure(self, name: str, value: Any, *, as_url: bool = False) -> str | None:
        """Why `value` of argument `name` is outside, in words; None if inside.

        `as_url`: the tool declares the argument a URL. A condition written in URLs
        is judged as one either way.
        """
        if as_url or self.is_about_urls:
            return self._url_failure(name, value)
        for keyword, expected in self.keywords().items():
            if not _holds(keyword, expected, value):
                return f"{name} {_words(keyword, expected)}"
        return None

    @property
    def is_about_urls(self) -> bool:
        """Whether the condition is written in URLs: its prefix, or an enum item."""
        texts = [self.prefix, *(self.enum or [])]
        return any(isinstance(text, str) and looks_like_url(text) for text in texts)

    def _url_failure(self, name: str, value: Any) -> str | None:
        try:
            url = normalize_url(value) if isinstance(value, str) else None
        except NotNormalizable as exc:
            return f"{name} must be an absolute http:// or https:// URL ({exc})"
        if url is None:
            return f"{name} must be an absolute http:// or https:// URL"
        for keyword, expected in self.keywords().items():
            if not _holds_url(keyword, expected, url):
                return f"{name} {_words(keyword, expected)} (as a URL: {url})"
        return None

    def describe(self, name: str) -> str:
        return " and ".join(
            f"{name} {_words(keyword, expected)}"
            for keyword, expected in self.keywords().items()
        )


class Condition(RootModel[dict[str, ArgumentCondition]]):
    """A grant's condition: argument name -> what it must be."""

    model_config = ConfigDict(frozen=True)
    root: dict[str, ArgumentCondition] = Field(min_length=1, max_length=MAX_ARGUMENTS)

    def failure(
        self, args: Mapping[str, Any], *, urls: Collection[str] = ()
    ) -> str | None:
        """The first argument outside the condition, in words; None if all inside.

        `urls`: the arguments the tool declares URLs (url_arguments()).
        """
        for name, condition in self.root.items():
            if name not in args:
                return f"{name} must be given ({condition.describe(name)})"
            failed = condition.failure(name, args[name], as_url=name in urls)
            if failed:
                return failed
        return None

    def describe(self) -> str:
        return "; ".join(c.describe(name) for name, c in self.root.items())

    def as_json(self) -> dict[str, dict[str, Any]]:
        return {name: c.keywords() for name, c in self.root.items()}


def _holds(keyword: str, expected: Any, value: Any) -> bool:
    if keyword == "enum":
        return any(_same(value, item) for item in expected)
    if keyword in ("minimum", "maximum"):
        if not _is_number(value) or not _is_finite(value):
            return False
        return value >= expected if keyword == "minimum" else value <= expected
    # A NUL ends the text for C code, past what was judged.
    if not isinstance(value, str) or "\0" in value:
        return False
    if keyword == "prefix":
        return value.startswith(expected)
    return _matches(expected, value)  # pattern


def _holds_url(keyword: str, expected: Any, url: str) -> bool:
    """Whether a normalized URL holds a keyword, its URLs normalized too."""
    if keyword == "enum":
        return any(isinstance(item, str) and _as_url(item) == url for item in expected)
    if keyword == "prefix":
        prefix = _as_prefix(expected)
        return prefix is not None and is_within(url, prefix)
    if keyword == "pattern":
        return _matches(expected, url)
    return False  # minimum, maximum: a URL is no number


@lru_cache(maxsize=512)
def _as_url(text: str) -> str | None:
    try:
        return normalize_url(text)
    except NotNormalizable:
        return None


def _as_prefix(text: str) -> str | None:
    try:
        return url_prefix(text)
    except NotNormalizable:
        return None  # a stored prefix no URL is within (a new one is refused)


@lru_cache(maxsize=512)
def _regex(pattern: str) -> re.Pattern[str]:
    # ASCII: \d, \w and \s as in JSON Schema (ECMA-262), not every script's digits.
    return re.compile(pattern, re.ASCII)


def _matches(pattern: str, value: str) -> bool:
    """Whether the pattern matches the whole value (none, if it does not compile)."""
    try:
        return _regex(pattern).fullmatch(value) is not None
    except (re.error, ValueError):
        return False


def _is_finite(value: int | float) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def _same(value: Any, item: Any) -> bool:
    # JSON's equality: true is not 1.
    return (
        type(value) is type(item)
        and value == item
        or (_is_number(value) and _is_number(item) and value == item)
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _words(keyword: str, expected: Any) -> str:
    if keyword == "enum":
        return "must be one of " + ", ".join(repr(item) for item in expected)
    if keyword == "pattern":
        return f"must match {expected}"
    if keyword == "prefix":
        return f"must start with {expected!r}"
    if keyword == "minimum":
        return f"must be at least {expected}"
    return f"must be at most {expected}"


# Checking a condition against its tool, when it is saved.

FITS = {
    "pattern": {"string"},
    "prefix": {"string"},
    "minimum": {"number", "integer"},
    "maximum": {"number", "integer"},
}


def check_condition(
    condition: Condition, *, tool: str, parameters: Mapping[str, Any]
) -> None:
    """Refuse a condition that does not fit the tool's argument schema.

    Raises:
        ConditionError: An argument the tool does not have, a keyword that does
            not fit an argument's type (its schema's `type`, when it says one), a
            pattern that does not compile as it is judged, or a URL in a prefix or
            enum that does not normalize.
    """
    properties = parameters.get("properties") or {}
    errors = []
    for name, argument in condition.root.items():
        if name not in properties:
            known = ", ".join(properties) or "none"
            errors.append(
                f"{name}: no such argument of {tool} (its arguments: {known})."
            )
            continue
        errors += _misfits(name, argument, _types(properties[name]))
        errors += _unjudgeable(name, argument)
    if errors:
        raise ConditionError(errors)


def _misfits(name: str, argument: ArgumentCondition, types: set[str]) -> list[str]:
    errors = []
    for keyword in argument.keywords():
        fits = FITS.get(keyword)
        if types and fits and not types & fits:
            kind = " or ".join(sorted(types))
            fitting = "a string" if "string" in fits else "a number"
            errors.append(
                f"{name}: {keyword} fits {fitting} argument; {name} is {kind}."
            )
    return errors


def _unjudgeable(name: str, argument: ArgumentCondition) -> list[str]:
    """A pattern that does not compile as judged, a URL that does not normalize."""
    errors = []
    if argument.pattern is not None:
        try:
            _regex(argument.pattern)
        except (re.error, ValueError) as exc:  # ValueError: (?u) with ASCII
            errors.append(f"{name}: pattern: not a valid regular expression ({exc}).")
    urls = [("prefix", argument.prefix), *(("enum", i) for i in argument.enum or [])]
    for keyword, text in urls:
        if not isinstance(text, str) or not looks_like_url(text):
            continue
        normalize = url_prefix if keyword == "prefix" else normalize_url
        try:
            normalize(text)
        except NotNormalizable as exc:
            errors.append(f"{name}: {keyword}: {text!r} is not a URL ({exc}).")
    return errors


def url_arguments(
    parameters: Mapping[str, Any], metadata: Mapping[str, Any] | None = None
) -> frozenset[str]:
    """The arguments a tool declares URLs: by their schema's `format`, or by name in
    its custom_metadata's `url_arguments`."""
    declared = set((metadata or {}).get(URL_ARGUMENTS) or ())
    for name, schema in (parameters.get("properties") or {}).items():
        if isinstance(schema, Mapping) and _formats(schema) & URL_FORMATS:
            declared.add(name)
    return frozenset(declared)


def _formats(schema: Mapping[str, Any]) -> set[str]:
    found = {str(schema.get("format", "")).lower()}
    for option in schema.get("anyOf") or []:
        if isinstance(option, Mapping):
            found |= _formats(option)
    return found


def _types(schema: Mapping[str, Any]) -> set[str]:
    """The JSON types a schema allows (genai's upper-case ones too); empty: any."""
    declared = schema.get("type")
    found = set()
    if isinstance(declared, str):
        found.add(declared.lower())
    elif isinstance(declared, list):
        found.update(str(item).lower() for item in declared)
    for option in schema.get("anyOf") or []:
        if isinstance(option, Mapping):
            inner = _types(option)
            if not inner:
                return set()
            found |= inner
    found.discard("null")
    return found


def parse_condition(value: Any) -> Condition | None:
    """A stored condition (JSON) as a Condition; None when there is none."""
    if not value:
        return None
    return Condition.model_validate(value)


def condition_feedback(tool: str, condition: Condition, failed: str) -> str:
    """What the model reads of a call outside its grant's condition."""
    return (
        f"Tool {tool} is allowed to you only if {condition.describe()}, and here "
        f"{failed}. Call it again within that condition, or tell the user it is "
        "not allowed."
    )
