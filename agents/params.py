"""What a client types in a URL, path or query string: one rule for each kind.

- A whole number (a row id, `after`, `limit`): ASCII digits only, within the
  database's bigint range. Python's int() and str.isdigit() also take Unicode
  digits ("²", "٣"), and a number past the bigint range overflows the database:
  either used to be a 500.
- A name (a session id, an agent, a toolset, a tool): anything but a slash or a
  NUL, which PostgreSQL refuses in any text it is asked to compare (an artifact's
  name: anything but a NUL).
- Any query parameter of the API: the text rule of agents.inputs (no NUL), and
  given once (a view reads one value: which of two would be a guess), by
  QueryTextMiddleware, before a view reads it.
"""

import re
from collections.abc import Callable, Mapping

from django.http import HttpRequest, HttpResponse, JsonResponse

from agents.inputs import text_problem
from project.converters import (  # noqa: F401 - the URL rule, re-exported
    BIGINT_MAX,
    DIGITS,
    ID_CONVERTER,
    NAME,
    NAME_CONVERTER,
)
from project.errors import DomainError

_DIGITS = re.compile(DIGITS)
_NAME = re.compile(NAME)
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


def id_list_param(
    params: Mapping[str, str], name: str, *, maximum_count: int
) -> list[int] | None:
    """The query parameter `name` as comma-separated row ids (ASCII digits, 1 to the
    bigint range), in order, without repeats; None when absent. Blank, an empty item,
    a bad id or more than `maximum_count` of them: BadParameter."""
    raw = params.get(name)
    if raw is None:
        return None
    items = raw.split(",")
    if len(items) > maximum_count:
        raise BadParameter(name, f"At most {maximum_count} ids, separated by commas.")
    ids = [parse_whole_number(item, name=name, minimum=1) for item in items]
    return list(dict.fromkeys(ids))


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


def seq_bound_param(params: Mapping[str, str], name: str) -> int | None:
    """The query parameter `name` as a seq bound: a whole number, or `end` (None:
    past the newest event)."""
    raw = params.get(name, "")
    if raw == "end":
        return None
    try:
        return parse_whole_number(raw, name=name)
    except BadParameter:
        raise BadParameter(
            name, "A seq (a whole number in digits 0-9), or end for the newest."
        ) from None


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


def is_name(value: str) -> bool:
    """Whether `value` may name something (as NameConverter takes it)."""
    return bool(_NAME.fullmatch(value))


class QueryTextMiddleware:
    """Refuse (400) an API request whose query string breaks the text rule or
    repeats a parameter."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith("/api/"):
            errors = _query_errors(request.GET)
            if errors:
                return JsonResponse(errors, status=400)
        return self.get_response(request)


def _query_errors(params) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for name, values in params.lists():
        if len(values) > 1:
            errors[name.replace("\x00", "")] = ["Give this parameter once."]
            continue
        for text in (name, *values):
            problem = text_problem(text)
            if problem:
                errors[name.replace("\x00", "")] = [problem]
    return errors
