"""Per-tool execution policies: how a call that access allowed is run.

A ToolPolicy says, for one tool: validate the arguments against its schema, cut
the call off after `timeout` seconds, retry errors marked retryable with
exponential backoff, run at most `max_concurrent` calls at once, allow
`rate_limit` calls per user per window, and reuse a read-only tool's result for
`cache_ttl` seconds. Defaults come from code (decorators on the tool function),
then settings.TOOLCRIB_TOOL_POLICIES, then the admin's override on the Tool row
(`Tool.policy`), key by key (docs/availability.md).

PolicyPlugin runs after GovernancePlugin and AvailabilityPlugin (TOOLCRIB_PLUGINS):
a policy only ever shapes a call that access already allowed, never widens it.

Validation, the rate limit and the cache are answered in PolicyPlugin's
before_tool_callback (the tool does not run); timeout, retries and concurrency
wrap the run itself (toolsets.execution says how).

Outcomes (invalid_args, rate_limited, cached, busy, timeout, retries) are noted
per call for GovernancePlugin's audit row, and shown to the model (and the
stream) in the function response.
"""

import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import jsonschema
from django.conf import settings
from django.core.cache import cache
from google.adk.agents.context import Context
from google.adk.plugins import BasePlugin
from google.adk.tools import BaseTool
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from toolsets import access, execution
from toolsets.bindings import abindings_for_invocation, is_internal
from toolsets.catalog import declaration_of
from toolsets.models import Tool, ToolCall

logger = logging.getLogger(__name__)

PLUGIN_NAME = "toolcrib_policies"
POLICY_ATTR = "toolcrib_policy"
RETRYABLE_ATTR = "toolcrib_retryable"
RATE_KEY = "toolsets:rate"
RESULT_KEY = "toolsets:result"
CACHED_FLAG = "served_from_cache"
OUTCOME_KEY = execution.OUTCOME_KEY
OFF_KEYS = frozenset({"timeout", "max_concurrent", "rate_limit", "cache_ttl"})


class Retryable(Exception):
    """Raise this (or `raise Retryable(...) from error`) for a transient failure."""


def retryable(error: BaseException) -> BaseException:
    """Mark an exception as worth retrying and return it: `raise retryable(err)`."""
    setattr(error, RETRYABLE_ATTR, True)
    return error


# The policy.


class PolicyOverride(BaseModel):
    """What an admin may set on a tool; a key left out keeps the default.

    `null` switches a policy off (no timeout, no limit, no cache). Which
    exceptions are retryable is the code's business, not an override's.
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


class ToolPolicy(BaseModel):
    """How calls of one tool run. All off except argument validation."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    validate_args: bool = True
    timeout: float | None = None
    retries: int = 0
    backoff: float = 0.5
    backoff_max: float = 10.0
    retry_on: tuple[type[BaseException], ...] = ()
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
            elif key == "rate_limit":
                changes[key] = tuple(value)
            elif value is not None or key in OFF_KEYS:
                changes[key] = value
        return self.model_copy(update=changes)

    def is_retryable(self, error: BaseException) -> bool:
        return (
            isinstance(error, Retryable)
            or bool(getattr(error, RETRYABLE_ATTR, False))
            or isinstance(error, self.retry_on)
        )

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt `attempt` (1-based): doubling, capped."""
        return min(self.backoff * 2 ** (attempt - 1), self.backoff_max)


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
    on: tuple[type[BaseException], ...] = (),
) -> Callable[..., Any]:
    """Default retries of a tool function, for `Retryable` errors and `on` types."""
    return policy(retries=times, backoff=backoff, backoff_max=backoff_max, retry_on=on)


def code_policy(tool: BaseTool) -> ToolPolicy:
    """The policy the tool's code declares (on the function or the tool object)."""
    target = getattr(tool, "func", tool)
    declared = getattr(target, POLICY_ATTR, None) or getattr(tool, POLICY_ATTR, {})
    return ToolPolicy().merged(declared)


def settings_policy(full_name: str, tool: BaseTool) -> ToolPolicy:
    """Code defaults with settings.TOOLCRIB_TOOL_POLICIES[full_name] over them."""
    overrides = getattr(settings, "TOOLCRIB_TOOL_POLICIES", {})
    return code_policy(tool).merged(overrides.get(full_name, {}))


async def apolicy_for(full_name: str, tool: BaseTool) -> ToolPolicy:
    """The effective policy: code, then settings, then the admin's override."""
    base = settings_policy(full_name, tool)
    row = await access.acatalog_tool(full_name)
    return base.merged((row.policy_override if row else None) or {})


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


# Argument validation.


def argument_errors(schema: Mapping[str, Any], args: Mapping[str, Any]) -> dict:
    """Field -> what is wrong with it, checked against a JSON schema; {} if valid."""
    if not schema:
        return {}
    try:
        validator = jsonschema.Draft202012Validator(schema)
        found = sorted(validator.iter_errors(dict(args)), key=lambda e: e.path)
    except jsonschema.SchemaError:
        logger.warning("tool schema is not a valid JSON schema: %s", schema)
        return {}
    errors: dict[str, str] = {}
    for error in found:
        if error.validator == "required" and not error.path:
            for name in set(error.validator_value) - set(error.instance):
                errors[name] = "missing (required)"
            continue
        name = ".".join(str(part) for part in error.absolute_path) or "(arguments)"
        errors.setdefault(name, error.message)
    return errors


def invalid_args_feedback(tool_name: str, errors: Mapping[str, str]) -> str:
    listed = "; ".join(f"{name}: {problem}" for name, problem in errors.items())
    return (
        f"Invalid arguments for {tool_name}, so it did not run: {listed}. "
        "Fix these arguments and call it again."
    )


# Rate limit and result cache (in Django's cache: Redis in production).


async def rate_limit_feedback(
    user_id: str, full_name: str, limit: tuple[int, int]
) -> str | None:
    """Feedback if this call goes over the tool's rate limit for this user."""
    calls, seconds = limit
    window = int(time.time() // seconds)
    key = f"{RATE_KEY}:{user_id}:{full_name}:{window}"
    await cache.aadd(key, 0, timeout=seconds + 1)
    try:
        count = await cache.aincr(key)
    except ValueError:  # expired between add and incr: a new window
        await cache.aset(key, 1, timeout=seconds + 1)
        count = 1
    if count <= calls:
        return None
    return (
        f"Rate limited: {full_name.rsplit('.', 1)[-1]} allows {calls} calls "
        f"per {seconds} seconds. Try again later."
    )


def result_key(user_id: str, full_name: str, args: Mapping[str, Any]) -> str:
    text = json.dumps(dict(args), sort_keys=True, default=str)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return f"{RESULT_KEY}:{user_id}:{full_name}:{digest}"


def _is_success(result: Any) -> bool:
    return (
        isinstance(result, dict)
        and "error" not in result
        and result.get("status") != "error"
        and not result.get(CACHED_FLAG)
    )


# The plugin.


class PolicyPlugin(BasePlugin):
    """Argument validation, rate limit, result cache, timeout, retries, concurrency."""

    def __init__(self, name: str = PLUGIN_NAME) -> None:
        super().__init__(name)

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict | None:
        """Refuse a bad or over-limit call, answer from cache, or prepare the run."""
        if is_internal(tool.name, tool):
            return None
        binding = (await abindings_for_invocation(tool_context)).get(tool.name)
        if binding is None:
            return None  # governance refused it already
        full_name = binding.full_name
        policy = await apolicy_for(full_name, binding.tool)
        refused = await _refusal_for(tool, tool_args, tool_context, full_name, policy)
        if refused is not None:
            execution.note_outcome(tool_context, tool, refused[OUTCOME_KEY], 0)
            return refused
        call = execution.Call(tool, full_name, policy)
        if policy.cache_ttl:
            call.result_key = result_key(tool_context.user_id, full_name, tool_args)
            cached = await cache.aget(call.result_key)
            if cached is not None:
                status = ToolCall.Status.CACHED
                execution.note_outcome(tool_context, tool, status, 0)
                return {**cached, CACHED_FLAG: True, OUTCOME_KEY: str(status)}
        if policy.controls_execution:
            execution.install(tool)
        execution.begin(call, tool_context)
        return None

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: Any,
    ) -> dict | None:
        """Keep a successful read-only result for the cache's TTL."""
        call = execution.end(tool_context, tool)
        if call is None or not call.result_key or not _is_success(result):
            return None
        stored = {k: v for k, v in result.items() if k != "attempts"}
        await cache.aset(call.result_key, stored, timeout=call.policy.cache_ttl)
        return None

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        error: BaseException,
    ) -> dict | None:
        """Forget the call; ADK handles the error as usual."""
        execution.end(tool_context, tool)
        return None


async def _refusal_for(
    tool: BaseTool,
    args: Mapping[str, Any],
    context: Context,
    full_name: str,
    policy: ToolPolicy,
) -> dict[str, Any] | None:
    if policy.validate_args:
        errors = argument_errors(declaration_of(tool)[1], args)
        if errors:
            return execution.refusal(
                invalid_args_feedback(tool.name, errors),
                ToolCall.Status.INVALID_ARGS,
                errors=errors,
            )
    if policy.rate_limit:
        limited = await rate_limit_feedback(
            context.user_id, full_name, policy.rate_limit
        )
        if limited:
            return execution.refusal(limited, ToolCall.Status.RATE_LIMITED)
    return None
