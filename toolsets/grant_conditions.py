"""Conditions on a call's arguments that an allow grant carries: data, never code.

A tool grant that allows may narrow the allow to calls whose arguments hold a
condition: per argument, JSON Schema's `enum`, `pattern` (searched, as JSON Schema
does: anchor it with `^...$`), `minimum` and `maximum`, and Toolcrib's `prefix`:

    {"url": {"pattern": "^https://[^/]+\\.corp\\.example(/|$)"}}
    {"path": {"prefix": "reports/"}}
    {"amount": {"maximum": 1000}}

Every keyword of every argument named must hold; an argument the call leaves out
fails its condition (a default the tool would fill in is not seen here). A grant's
`otherwise` says what a call outside it gets: `deny` (refused, audited `denied`,
with feedback naming the condition, so the model can retry within it) or
`approval` (held for a person's approval, as the catalog's requires_approval).

A condition is checked when it is saved, against the tool's argument schema
(`check_condition`): an argument the tool does not have, a keyword that does not
fit the argument's type, a bad regular expression are refused. Only an allow on
one tool carries one: a toolset's tools have different arguments, and a deny
narrowed by a condition would widen access where the condition fails.
"""

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    model_validator,
)

MAX_ARGUMENTS = 20
MAX_ENUM = 200
MAX_TEXT = 500

Scalar = str | int | float | bool | None
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]


class ConditionError(ValueError):
    """A condition that does not fit its tool; `errors` are its problems, in words."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


def _compiles(pattern: str) -> str:
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

    def failure(self, name: str, value: Any) -> str | None:
        """Why `value` of argument `name` is outside, in words; None if inside."""
        for keyword, expected in self.keywords().items():
            if not _holds(keyword, expected, value):
                return f"{name} {_words(keyword, expected)}"
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

    def failure(self, args: Mapping[str, Any]) -> str | None:
        """The first argument outside the condition, in words; None if all inside."""
        for name, condition in self.root.items():
            if name not in args:
                return f"{name} must be given ({condition.describe(name)})"
            failed = condition.failure(name, args[name])
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
        if not _is_number(value):
            return False
        return value >= expected if keyword == "minimum" else value <= expected
    if not isinstance(value, str):
        return False
    if keyword == "prefix":
        return value.startswith(expected)
    return re.search(expected, value) is not None  # pattern


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
        ConditionError: An argument the tool does not have, or a keyword that does
            not fit an argument's type (its schema's `type`, when it says one).
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
        types = _types(properties[name])
        for keyword in argument.keywords():
            fits = FITS.get(keyword)
            if types and fits and not types & fits:
                kind = " or ".join(sorted(types))
                fitting = "a string" if "string" in fits else "a number"
                errors.append(
                    f"{name}: {keyword} fits {fitting} argument; {name} is {kind}."
                )
    if errors:
        raise ConditionError(errors)


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
