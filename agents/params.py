"""Whole numbers a client types, in a URL path or a query string: one rule for all.

ASCII digits only, within the database's bigint range. Python's int() and
str.isdigit() also take Unicode digits ("²", "٣"), and a number past the bigint
range overflows the database: either used to be a 500.
"""

import re
from collections.abc import Mapping

from django.urls import register_converter

from agents.errors import DomainError

BIGINT_MAX = 2**63 - 1
DIGITS = "[0-9]+"  # not \d, which matches every Unicode digit
_DIGITS = re.compile(DIGITS)
_TRUE = frozenset({"1", "true", "yes"})
_FALSE = frozenset({"0", "false", "no"})


class BadParameter(DomainError):
    """A query or handshake parameter that is not what it must be."""

    code = "bad_request"

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.field = name


def parse_whole_number(
    raw: str, *, name: str, minimum: int = 0, maximum: int = BIGINT_MAX
) -> int:
    """`raw` as an int between minimum and maximum, or BadParameter."""
    if not _DIGITS.fullmatch(raw) or not minimum <= int(raw) <= maximum:
        raise BadParameter(
            name, f"A whole number from {minimum} to {maximum}, in digits 0-9."
        )
    return int(raw)


def whole_number_param(
    params: Mapping[str, str],
    name: str,
    *,
    default: int,
    minimum: int = 0,
    maximum: int = BIGINT_MAX,
) -> int:
    """The query parameter `name` as a whole number; `default` when absent or blank."""
    raw = params.get(name)
    if raw in (None, ""):
        return default
    return parse_whole_number(raw, name=name, minimum=minimum, maximum=maximum)


def given(params: Mapping[str, str]) -> dict[str, str]:
    """The query parameters that have a value: a blank one is the same as none."""
    return {name: value for name, value in params.items() if value != ""}


def bool_param(params: Mapping[str, str], name: str) -> bool:
    """The query parameter `name` as a boolean (1/true/yes, 0/false/no); absent: False."""
    raw = params.get(name)
    if raw in (None, ""):
        return False
    value = raw.lower()
    if value not in _TRUE | _FALSE:
        raise BadParameter(name, "true or false.")
    return value in _TRUE


class IdConverter:
    """`<id:pk>`: a row id in a URL. Anything else is no such page (404)."""

    regex = DIGITS

    def to_python(self, value: str) -> int:
        number = int(value)
        if not 1 <= number <= BIGINT_MAX:
            raise ValueError(value)  # Django then tries the next pattern: a 404
        return number

    def to_url(self, value: int) -> str:
        return str(value)


ID_CONVERTER = "id"
register_converter(IdConverter, ID_CONVERTER)
