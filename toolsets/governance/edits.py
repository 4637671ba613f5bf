"""An approver's changed arguments, held to what the call may be: the tool's schema
and the condition of the grant that lets its requester use it.

agents.requests asks before it approves a call with changed arguments
(agents.requests.edits); it reaches this check by name, from
TOOLCRIB_APPROVAL_ARGUMENT_CHECKS, as the runtime reaches its plugins. The call
that then runs goes through every check of governance again, with the changed
arguments: this check only says no earlier, and in the approver's words, naming
the argument.
"""

from collections.abc import Mapping
from typing import Any

from agents.models import Request
from agents.pauses import ArgumentsRefused
from toolsets import access
from toolsets.governance.policies import argument_errors
from toolsets.grant_conditions import url_arguments
from toolsets.models import Tool

UNKNOWN = (
    "The catalog does not know this tool's arguments: approve the call as asked, "
    "or reject it."
)


def check_arguments(*, request: Request, arguments: Mapping[str, Any]) -> None:
    """Refuse `arguments` for `request`'s call unless they fit the tool's schema and
    the condition its requester's grant puts on them.

    Raises:
        ArgumentsRefused: naming the first argument that does not fit.
    """
    row = catalog_tool(request)
    if row is None:
        raise ArgumentsRefused(None, UNKNOWN)
    schema = row.parameters or {}
    declared = schema.get("properties")
    if isinstance(declared, Mapping):
        for name in arguments:
            if name not in declared:
                raise ArgumentsRefused(name, f"{row.name} has no such argument.")
    for name, problem in argument_errors(schema, arguments).items():
        raise ArgumentsRefused(name, problem)
    _within_condition(request, row, arguments)


def catalog_tool(request: Request) -> Tool | None:
    """The catalog's row of the tool a request asks about: the one the catalog's
    gate named, a gateway call's (its full name), else the only one of its name."""
    for full_name in (request.catalog_tool, request.tool_name):
        if full_name:
            row = Tool.objects.filter(full_name=full_name, missing=False).first()
            if row is not None:
                return row
    named = list(Tool.objects.filter(name=request.tool_name, missing=False)[:2])
    return named[0] if len(named) == 1 else None


def _within_condition(
    request: Request, row: Tool, arguments: Mapping[str, Any]
) -> None:
    requester = request.requester_id
    if requester is None:
        return
    decision = access.explain(user_id=requester, tool=row.full_name)
    condition = decision.condition
    if condition is None:
        return
    urls = url_arguments(row.parameters or {})
    grant = decision.rule.removeprefix("allowed by ")
    for name, argument in condition.root.items():
        if name not in arguments:
            raise ArgumentsRefused(
                name,
                f"must be given ({argument.describe(name)}), by the condition of "
                f"{grant}.",
            )
        failed = argument.failure(name, arguments[name], as_url=name in urls)
        if failed:
            raise ArgumentsRefused(
                name,
                f"{failed.removeprefix(name + ' ')}, by the condition of {grant}.",
            )
