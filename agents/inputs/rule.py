"""The one rule for what a client sends, on both edges. For every text that will be
stored (`text_problem`):

- no NUL: PostgreSQL stores it neither in text nor in jsonb;
- no lone surrogate (half of a UTF-16 pair, which JSON's `"\\ud800"` escape makes):
  no UTF-8 encoder accepts one, so a stored one would fail every later read.

JSON, from a request body or a frame, is read by `load_client_json`, which applies
the rule to every string and key and bounds the nesting, since Python's parser and
every serializer after it recurse. Its numbers are numbers JSON can carry back:
finite (`1e400` would read as infinity, which no JSON encoder, PostgreSQL's jsonb
nor SQLite's JSON takes), and integers within Python's limit of digits
(`sys.get_int_max_str_digits()`, 4,300), past which Python refuses to read them.
Rows stored before the rule existed are shown with U+FFFD in place of a lone
surrogate (`replace_surrogates`), never refused.
"""

import json
import math
import re
import sys
from collections import deque
from collections.abc import Iterator
from typing import Annotated, Any

from django.conf import settings
from pydantic import AfterValidator, BaseModel, ConfigDict

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")

Path = tuple[str | int, ...]


class BadJson(ValueError):
    """Not JSON a client may send: malformed, nested too deep, NaN/Infinity, or a
    number out of range."""


class BadText(ValueError):
    """A string or key breaks the text rule; `path` leads to it (keys and indexes)."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{dotted(path)}: {problem}" if path else problem)


def text_problem(text: str) -> str | None:
    """Why `text` may not be stored, or None if it may."""
    if "\x00" in text:
        return "NUL characters are not allowed."
    if _SURROGATE.search(text):
        return "Lone surrogates (half of a UTF-16 pair) are not allowed."
    return None


def text_problems(value: Any) -> Iterator[tuple[Path, str]]:
    """Every string and key of a JSON value that breaks the rule, outermost first."""
    pending: deque[tuple[Path, Any]] = deque([((), value)])
    while pending:
        path, item = pending.popleft()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                yield path, problem
        elif isinstance(item, dict):
            for key, child in item.items():
                problem = text_problem(str(key))
                if problem:  # the path never shows the bad key itself
                    yield path, f"A key: {problem}"
                    continue
                pending.append(((*path, key), child))
        elif isinstance(item, list | tuple):
            pending.extend(((*path, index), child) for index, child in enumerate(item))


def json_depth(value: Any) -> int:
    """How many arrays and objects are nested in a JSON value, at the deepest."""
    deepest = 0
    pending: list[tuple[int, Any]] = [(1, value)]
    while pending:
        depth, item = pending.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list | tuple):
            continue
        deepest = max(deepest, depth)
        pending.extend((depth + 1, child) for child in item)
    return deepest


def check_json(value: Any) -> Any:
    """Refuse a JSON value nested too deep, holding a number JSON cannot carry, or
    holding a text that breaks the rule.

    Raises:
        BadJson: It is nested deeper than TOOLCRIB_MAX_JSON_DEPTH, or holds NaN or
            an infinity (a value parsed elsewhere, such as by the MCP SDK).
        BadText: A string or key breaks the rule.
    """
    limit = settings.TOOLCRIB_MAX_JSON_DEPTH
    if json_depth(value) > limit:
        raise BadJson(_too_deep(limit))
    if not _all_finite(value):
        raise BadJson(NOT_FINITE)
    first = next(text_problems(value), None)
    if first is not None:
        raise BadText(*first)
    return value


def load_json(raw: str | bytes) -> Any:
    """Parse JSON as a client may send it, before any rule for its texts.

    Raises:
        BadJson: Malformed, nested past Python's recursion limit, NaN/Infinity, a
            number out of a float's range, or an integer too long to read.
    """
    try:
        return json.loads(
            raw, parse_constant=_refuse_constant, parse_float=_finite_float
        )
    except RecursionError:
        raise BadJson(_too_deep(settings.TOOLCRIB_MAX_JSON_DEPTH)) from None
    except json.JSONDecodeError as exc:
        raise BadJson(f"Malformed JSON: {exc.msg} at position {exc.pos}.") from None
    except UnicodeDecodeError:
        raise BadJson("Malformed JSON: not UTF-8 text.") from None
    except BadJson:
        raise
    except ValueError:  # int() past sys.get_int_max_str_digits(), the one other
        raise BadJson(_TOO_LONG.format(sys.get_int_max_str_digits())) from None


def load_client_json(raw: str | bytes) -> Any:
    """Parse what a client sent and check it (see load_json and check_json).

    Raises:
        BadJson: Malformed, nested too deep, NaN/Infinity or a number out of range.
        BadText: A string or key breaks the rule.
    """
    return check_json(load_json(raw))


def replace_surrogates(value: Any) -> Any:
    """A copy of a JSON value with U+FFFD for each lone surrogate, in strings and keys.

    Iterative, as text_problems is: a row stored before the depth bound may be deep.
    """
    root = [value]
    pending: list[tuple[list | dict, Any]] = [(root, 0)]
    while pending:
        parent, slot = pending.pop()
        item = parent[slot]
        if isinstance(item, str):
            parent[slot] = _SURROGATE.sub(REPLACEMENT, item)
        elif isinstance(item, dict):
            parent[slot] = copy = {_replaced_key(key): v for key, v in item.items()}
            pending.extend((copy, key) for key in copy)
        elif isinstance(item, list | tuple):
            parent[slot] = copy = list(item)
            pending.extend((copy, index) for index in range(len(copy)))
    return root[0]


def _replaced_key(key: Any) -> Any:
    return _SURROGATE.sub(REPLACEMENT, key) if isinstance(key, str) else key


def dotted(path: Path) -> str:
    return ".".join(str(part) for part in path)


def _too_deep(limit: int) -> str:
    return f"JSON nested deeper than {limit} levels is not accepted."


def _refuse_constant(name: str) -> None:
    raise BadJson(f"Malformed JSON: {name} is not a JSON value.")


NOT_FINITE = "Malformed JSON: a number is out of range (NaN or infinite)."
_TOO_LONG = "Malformed JSON: an integer longer than {} digits is out of range."


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        shown = text if len(text) <= 40 else f"{text[:37]}..."
        raise BadJson(f"Malformed JSON: the number {shown} is out of range.")
    return value


def _all_finite(value: Any) -> bool:
    """Whether no float in a JSON value is NaN or infinite (iterative: a value may
    be deep)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return True


def check_text(value: str) -> str:
    """`value` if it may be stored (text_problem), for a pydantic validator."""
    problem = text_problem(value)
    if problem:
        raise ValueError(problem)
    return value


StoredText = Annotated[str, AfterValidator(check_text)]
"""A string that will be stored: no NUL, no lone surrogate."""

StoredJson = Annotated[dict[str, Any], AfterValidator(check_json)]
"""A JSON object that will be stored: bounded depth, every string and key a StoredText."""


# What a client sends: a field it does not know is refused. (No docstring: it
# would become the model's JSON schema description.)
class ClientInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
