"""A tool's policy before the call runs: argument validation, the rate limit and
the result cache, three of governance's checks (checks.CHECKS gives the order).

What a policy is, and where it comes from, is toolsets.policies; the run itself
(timeout, retries, concurrency) is execution.py. Each check here answers a call
without running it, with `"outcome"` in what the model reads and the same status
in the audit: `invalid_args`, `rate_limited`, or `cached` (a success served from
the cache). Rate counters and results live in Django's cache: Redis in production.
"""

import hashlib
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

import jsonschema
from django.core.cache import cache
from google.adk.agents.context import Context
from google.adk.tools import BaseTool, FunctionTool

from agents.timeline import is_error_response
from toolsets.catalog import declaration_of
from toolsets.governance.execution import OUTCOME_KEY, refusal
from toolsets.models import ToolCall
from toolsets.turn import Answer, Call, Check, Turn

logger = logging.getLogger(__name__)

RATE_KEY = "toolsets:rate"
RESULT_KEY = "toolsets:result"
CACHED_FLAG = "served_from_cache"


class ValidArguments(Check):
    """Refuse arguments that do not match the tool's declared schema."""

    status = ToolCall.Status.INVALID_ARGS

    async def check(self, *, call: Call, turn: Turn, context: Context) -> Answer | None:
        if not (await call.apolicy()).validate_args:
            return None
        errors = validator_of(call.tool).errors(call.args)
        if not errors:
            return None
        message = invalid_args_feedback(call.tool.name, errors)
        return Answer(self.status, refusal(message, self.status, errors=errors))


class RateLimit(Check):
    """Refuse a call over the tool's rate limit for this user."""

    status = ToolCall.Status.RATE_LIMITED

    async def check(self, *, call: Call, turn: Turn, context: Context) -> Answer | None:
        limit = (await call.apolicy()).rate_limit
        if not limit:
            return None
        feedback = await rate_limit_feedback(context.user_id, call.full_name, limit)
        if not feedback:
            return None
        return Answer(self.status, refusal(feedback, self.status))


class ResultCache(Check):
    """Serve a read-only tool's stored result for the same user and arguments."""

    status = ToolCall.Status.CACHED

    async def check(self, *, call: Call, turn: Turn, context: Context) -> Answer | None:
        ttl = (await call.apolicy()).cache_ttl
        if not ttl:
            return None
        call.result_key = result_key(context.user_id, call.full_name, call.args)
        cached = await cache.aget(call.result_key)
        if cached is None:
            return None
        response = {**cached, CACHED_FLAG: True, OUTCOME_KEY: str(self.status)}
        return Answer(self.status, response)


async def remember_result(call: Call, result: Any) -> None:
    """Keep a call's successful result for its policy's cache TTL, if it has one."""
    if not call.result_key or call.policy is None or not _is_success(result):
        return
    stored = {k: v for k, v in result.items() if k != "attempts"}
    await cache.aset(call.result_key, stored, timeout=call.policy.cache_ttl)


# Argument validation.


class ArgumentsValidator:
    """A tool's argument schema, with its JSON schema validator built once."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self.validator = jsonschema.Draft202012Validator(schema) if schema else None

    def errors(self, args: Mapping[str, Any]) -> dict:
        """See argument_errors()."""
        if self.validator is None:
            return {}
        return argument_errors(self.schema, args, self.validator)


MAX_VALIDATORS = 4096

# A tool's code (a FunctionTool's function, else the tool) -> (it, its validator):
# a declaration is built once per process, not at every call.
_validators: dict[int, tuple[Any, ArgumentsValidator]] = {}


def validator_of(tool: BaseTool) -> ArgumentsValidator:
    """The validator of the tool's declared arguments, built once per process."""
    func = getattr(tool, "func", None)
    code = func if func is not None and type(tool) is FunctionTool else tool
    found = _validators.get(id(code))
    if found is not None and found[0] is code:
        return found[1]
    if len(_validators) >= MAX_VALIDATORS:
        _validators.clear()
    validator = ArgumentsValidator(declaration_of(tool)[1])
    _validators[id(code)] = (code, validator)
    return validator


def argument_errors(
    schema: Mapping[str, Any],
    args: Mapping[str, Any],
    validator: jsonschema.protocols.Validator | None = None,
) -> dict:
    """Field -> what is wrong with it, checked against a JSON schema; {} if valid."""
    if not schema:
        return {}
    try:
        validator = validator or jsonschema.Draft202012Validator(schema)
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


# Rate limit and result cache.


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
        and not is_error_response(result)
        and not result.get(CACHED_FLAG)
    )
