"""Per-tool execution policies: what a tool's policy is, and where it comes from.

A ToolPolicy says, for one tool: validate the arguments against its schema, cut
the call off after `timeout` seconds, retry errors marked retryable (or of a type
in `retry_on`) with exponential backoff (`backoff`, times `multiplier` per retry,
up to `backoff_max`: the GoAgent RetryPolicy), run at most `max_concurrent` calls
at once, allow `rate_limit` calls per user per window, and reuse a read-only
tool's result for `cache_ttl` seconds. Defaults come from code (the decorators
below, on the tool function), then settings.TOOLCRIB_TOOL_POLICIES, then the
admin's override on the Tool row (`Tool.policy`), key by key
(docs/availability.md); `effective_policy` shows the merge.

This module is what tool authors (`policy`, `rate_limited`, `cached_for`, `retry`,
`Retryable`, `retryable`) and administrators (the override) use. Governance
applies a policy, after access, activation, availability and the approval gate
have let the call through, so a policy never widens access:
toolsets.governance.policies answers a call before it runs (validation, the rate
limit, the result cache), toolsets.governance.execution wraps the run (timeout,
retries, concurrency). Outcomes are audited on the call's ToolCall row and shown
to the model (and the stream) in the function response.
"""

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.conf import settings
from google.adk.tools import BaseTool
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from toolsets import access
from toolsets.code import acode_tool
from toolsets.models import Tool

logger = logging.getLogger(__name__)

POLICY_ATTR = "toolcrib_policy"
RETRYABLE_ATTR = "toolcrib_retryable"
OFF_KEYS = frozenset({"timeout", "max_concurrent", "rate_limit", "cache_ttl"})
# An exception's class name, or its dotted path: `ConnectionError`,
# `httpx.ConnectError`, `myapp.errors.Busy`.
ERROR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
MAX_RETRY_ON = 20


class Retryable(Exception):
    """Raise this (or `raise Retryable(...) from error`) for a transient failure."""


def retryable(error: BaseException) -> BaseException:
    """Mark an exception as worth retrying and return it: `raise retryable(err)`."""
    setattr(error, RETRYABLE_ATTR, True)
    return error


# The policy.


class PolicyOverride(BaseModel):
    """What an admin may set on a tool; a key left out keeps the default.

    `null` switches a policy off (no timeout, no limit, no cache). `retry_on`
    names the exceptions that are retried (by class name or dotted path, matched
    against the error's classes), replacing the code's list; an error the code
    marks retryable is retried whatever it says.
    """

    model_config = ConfigDict(extra="forbid")

    validate_args: bool | None = Field(
        None, description="Check arguments against the schema before running."
    )
    timeout: float | None = Field(None, gt=0, le=3600, description="Seconds.")
    retries: int | None = Field(
        None, ge=0, le=10, description="Extra attempts for retryable errors."
    )
    backoff: float | None = Field(
        None, ge=0, le=60, description="Seconds before the first retry."
    )
    backoff_max: float | None = Field(
        None, ge=0, le=600, description="Longest wait between retries."
    )
    multiplier: float | None = Field(
        None, ge=1, le=10, description="Each wait is the last one times this."
    )
    retry_on: list[str] | None = Field(
        None,
        max_length=MAX_RETRY_ON,
        description="Exceptions retried, by class name or dotted path.",
    )
    max_concurrent: int | None = Field(
        None, ge=1, le=1000, description="Calls of this tool running at once."
    )
    queue_wait: float | None = Field(
        None, ge=0, le=600, description="Seconds a call waits for a free slot."
    )
    rate_limit: tuple[int, int] | None = Field(
        None, description="[calls, seconds] per user."
    )
    cache_ttl: int | None = Field(
        None, ge=0, le=86_400, description="Seconds a read-only result is reused."
    )

    @field_validator("retry_on")
    @classmethod
    def _error_names(cls, value: list[str] | None) -> list[str] | None:
        for name in value or []:
            if len(name) > 200 or not ERROR_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not an exception's name")
        return value

    @field_validator("rate_limit")
    @classmethod
    def _at_least_one(cls, value: tuple[int, int] | None) -> tuple[int, int] | None:
        if value is not None and min(value) < 1:
            raise ValueError("calls and seconds must be at least 1")
        return value


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "nullable": True}


# PolicyOverride in OpenAPI 3.0 terms, for the API's schema.
OVERRIDE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "validate_args": _nullable({"type": "boolean"}),
        "timeout": _nullable({"type": "number", "maximum": 3600}),
        "retries": _nullable({"type": "integer", "minimum": 0, "maximum": 10}),
        "backoff": _nullable({"type": "number", "minimum": 0, "maximum": 60}),
        "backoff_max": _nullable({"type": "number", "minimum": 0, "maximum": 600}),
        "multiplier": _nullable({"type": "number", "minimum": 1, "maximum": 10}),
        "retry_on": _nullable(
            {
                "type": "array",
                "items": {"type": "string", "pattern": ERROR_NAME.pattern},
                "maxItems": MAX_RETRY_ON,
                "description": "Exceptions retried, by class name or dotted path.",
            }
        ),
        "max_concurrent": _nullable({"type": "integer", "minimum": 1, "maximum": 1000}),
        "queue_wait": _nullable({"type": "number", "minimum": 0, "maximum": 600}),
        "rate_limit": _nullable(
            {
                "type": "array",
                "items": {"type": "integer", "minimum": 1},
                "minItems": 2,
                "maxItems": 2,
                "description": "[calls, seconds] per user.",
            }
        ),
        "cache_ttl": _nullable({"type": "integer", "minimum": 0, "maximum": 86400}),
    },
}


# ToolPolicy.as_json() in OpenAPI 3.0 terms: every key, merged.
EFFECTIVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "The policy calls get: the code's defaults, then settings, then "
    "the override.",
    "properties": {
        "validate_args": {"type": "boolean"},
        "timeout": _nullable({"type": "number"}),
        "retries": {"type": "integer", "minimum": 0},
        "backoff": {"type": "number", "minimum": 0},
        "backoff_max": {"type": "number", "minimum": 0},
        "multiplier": {"type": "number"},
        "retry_on": {"type": "array", "items": {"type": "string"}},
        "max_concurrent": _nullable({"type": "integer"}),
        "queue_wait": {"type": "number", "minimum": 0},
        "rate_limit": _nullable({"type": "array", "items": {"type": "integer"}}),
        "cache_ttl": _nullable({"type": "integer"}),
    },
    "required": list(OVERRIDE_SCHEMA["properties"]),
}


class ToolPolicy(BaseModel):
    """How calls of one tool run. All off except argument validation."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    validate_args: bool = True
    timeout: float | None = None
    retries: int = 0
    backoff: float = 0.5
    backoff_max: float = 10.0
    multiplier: float = 2.0
    # Types (code) or names (an admin's override): see is_retryable.
    retry_on: tuple[type[BaseException] | str, ...] = ()
    max_concurrent: int | None = None
    queue_wait: float = 10.0
    rate_limit: tuple[int, int] | None = None
    cache_ttl: int | None = None

    @property
    def controls_execution(self) -> bool:
        return bool(self.timeout or self.retries or self.max_concurrent)

    def merged(self, override: Mapping[str, Any]) -> "ToolPolicy":
        """This policy with an override's keys applied.

        For a limit (timeout, max_concurrent, rate_limit, cache_ttl) 0 or None
        switches it off; for any other key None keeps the value underneath.
        """
        changes: dict[str, Any] = {}
        for key, value in override.items():
            if key not in ToolPolicy.model_fields:
                logger.warning("unknown tool policy key %s ignored", key)
            elif key in OFF_KEYS and not value:
                changes[key] = None
            elif key in ("rate_limit", "retry_on") and value is not None:
                changes[key] = tuple(value)
            elif value is not None or key in OFF_KEYS:
                changes[key] = value
        return self.model_copy(update=changes)

    def is_retryable(self, error: BaseException) -> bool:
        """Marked retryable by the code, or of a type `retry_on` lists."""
        if isinstance(error, Retryable) or getattr(error, RETRYABLE_ATTR, False):
            return True
        names = {name for cls in type(error).__mro__ for name in _names_of(cls)}
        return any(
            (kind in names) if isinstance(kind, str) else isinstance(error, kind)
            for kind in self.retry_on
        )

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt `attempt` (1-based): `backoff`,
        times `multiplier` for each attempt after the first, capped."""
        return min(self.backoff * self.multiplier ** (attempt - 1), self.backoff_max)

    def as_json(self) -> dict[str, Any]:
        """The policy as the API shows it: errors by name, the rate limit a list."""
        shown = self.model_dump(exclude={"retry_on", "rate_limit"})
        shown["retry_on"] = [
            kind if isinstance(kind, str) else error_name(kind)
            for kind in self.retry_on
        ]
        shown["rate_limit"] = list(self.rate_limit) if self.rate_limit else None
        return shown


def _names_of(kind: type) -> tuple[str, str]:
    return kind.__name__, f"{kind.__module__}.{kind.__qualname__}"


def error_name(kind: type[BaseException]) -> str:
    """`ConnectionError` for a built-in, else `module.QualName`."""
    if kind.__module__ == "builtins":
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


def check_override(value: Any) -> dict[str, Any]:
    """An admin's override, validated; PolicyError names the bad fields."""
    if value in (None, ""):
        return {}
    if not isinstance(value, Mapping):
        raise PolicyError({"policy": ["Must be an object."]})
    try:
        checked = PolicyOverride.model_validate(value)
    except ValidationError as error:
        raise PolicyError(_field_errors(error)) from error
    return checked.model_dump(mode="json", include=set(value))


class PolicyError(ValueError):
    """An override with bad fields; `errors` maps each field to its messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors


def _field_errors(error: ValidationError) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for item in error.errors():
        name = str(item["loc"][0]) if item["loc"] else "policy"
        errors.setdefault(name, []).append(item["msg"])
    return errors


# Defaults in code.


def policy(**defaults: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Set a tool function's default policy: `@policy(timeout=5, retries=2)`."""
    unknown = set(defaults) - set(ToolPolicy.model_fields)
    if unknown:
        raise TypeError(f"unknown policy fields: {', '.join(sorted(unknown))}")
    ToolPolicy(**defaults)  # a bad value fails at import, not at the first call

    def mark(func: Callable[..., Any]) -> Callable[..., Any]:
        current = getattr(func, POLICY_ATTR, {})
        setattr(func, POLICY_ATTR, {**current, **defaults})
        return func

    return mark


def rate_limited(calls: int, seconds: int) -> Callable[..., Any]:
    """Default rate limit of a tool function: calls per seconds, per user."""
    return policy(rate_limit=(calls, seconds))


def cached_for(seconds: int) -> Callable[..., Any]:
    """Default result cache of a read-only tool function, per user and arguments."""
    return policy(cache_ttl=seconds)


def retry(
    times: int,
    *,
    backoff: float = 0.5,
    backoff_max: float = 10.0,
    multiplier: float = 2.0,
    on: Sequence[type[BaseException] | str] = (),
) -> Callable[..., Any]:
    """Default retries of a tool function, for `Retryable` errors and `on` types
    (classes, or names as an admin gives them)."""
    return policy(
        retries=times,
        backoff=backoff,
        backoff_max=backoff_max,
        multiplier=multiplier,
        retry_on=tuple(on),
    )


def code_policy(tool: BaseTool | None) -> ToolPolicy:
    """The policy the tool's code declares (on the function or the tool object);
    the defaults for a tool with none (an imported one)."""
    if tool is None:
        return ToolPolicy()
    target = getattr(tool, "func", tool)
    declared = getattr(target, POLICY_ATTR, None) or getattr(tool, POLICY_ATTR, {})
    return ToolPolicy().merged(declared)


def settings_policy(full_name: str, tool: BaseTool | None) -> ToolPolicy:
    """Code defaults with settings.TOOLCRIB_TOOL_POLICIES[full_name] over them."""
    overrides = getattr(settings, "TOOLCRIB_TOOL_POLICIES", {})
    return code_policy(tool).merged(overrides.get(full_name, {}))


async def apolicy_for(full_name: str, tool: BaseTool) -> ToolPolicy:
    """The effective policy: code, then settings, then the admin's override."""
    base = settings_policy(full_name, tool)
    row = await access.acatalog_tool(full_name)
    return base.merged((row.policy_override if row else None) or {})


def effective_policy(row: Tool, tool: BaseTool | None) -> ToolPolicy:
    """A catalogued tool's policy now: its code's (`tool`, None for an imported
    one), then settings, then the row's override; what apolicy_for gives a call."""
    return settings_policy(row.full_name, tool).merged(row.policy or {})


async def aeffective_policy(row: Tool) -> ToolPolicy:
    """See effective_policy(); the row's code is found first (toolsets.code)."""
    return effective_policy(row, await acode_tool(row))


def rate_limit_of(full_name: str, tool: BaseTool) -> tuple[int, int] | None:
    """(calls, seconds) per user from code and settings (not the admin override)."""
    return settings_policy(full_name, tool).rate_limit


def cache_ttl_of(full_name: str, tool: BaseTool) -> int | None:
    """Seconds a result is reused, from code and settings (not the admin override)."""
    return settings_policy(full_name, tool).cache_ttl


def set_policy(*, tool: Tool, policy: Mapping[str, Any] | None) -> Tool:
    """Store an admin's override for a tool; it applies from the next call."""
    tool.policy = check_override(policy)
    tool.save(update_fields=["policy", "updated_at"])
    return tool
