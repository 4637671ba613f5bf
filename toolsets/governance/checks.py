"""Governance's checks, in the order every model step and every call goes through them.

Each check may narrow what a model step offers (`offer`) and may answer a call
instead of letting it run (`check`), with the status its refusal is audited with.
The order is CHECKS, below, and nowhere else:

1. access (`denied`): the one decision of toolsets.access, on every step and call
   (a call is judged by its step's decisions, taken at the step's reading of the
   version counters); then review (`unreviewed`): an imported tool whose
   declaration staff have not approved, new or changed since (toolsets.reviews);
   then the condition on the call's arguments of the allow that decided, if it
   has one (toolsets.grant_conditions: `denied`, or held for approval);
2. activation (`inactive`): the toolsets the agent has now (toolsets.conditions)
   and the session's active ones (toolsets.activation);
3. availability: a call the model was not offered at that step (the first call's
   tool choice, progressive exposure: `not_offered`), then the tool's own gates
   and the agent's middleware (`gated`);
4. the catalog's approval gate (`awaiting_approval` while a person decides,
   `rejected` once refused);
5. the policy (policies.py): arguments (`invalid_args`), rate limit
   (`rate_limited`), result cache (`cached`); then execution.py wraps the run.

A call the first refusing check stops goes no further: later checks never see
it, and its one audit row carries that check's status (plugin.py writes it).
"""

import inspect
from collections.abc import Mapping
from dataclasses import replace

from asgiref.sync import sync_to_async
from google.adk.agents.context import Context
from google.adk.models import LlmRequest
from google.genai import types

from agents.pauses import (
    PAYLOAD_APPROVALS,
    PAYLOAD_APPROVER_GROUP,
    PAYLOAD_CATALOG_TOOL,
    PAYLOAD_DESCRIPTION,
    PAYLOAD_SELF_APPROVAL,
    PAYLOAD_TIMEOUT,
    first_line,
)
from toolsets import access
from toolsets.access import Decision, Reason
from toolsets.activation import ainactive_toolsets
from toolsets.availability import (
    arun_middleware,
    gates_of,
    is_hidden,
    middleware_of,
)
from toolsets.bindings import Binding, is_internal
from toolsets.catalog import declaration_of
from toolsets.conditions import Condition, aabsent_toolsets
from toolsets.declarations import digest_of
from toolsets.governance.execution import refusal
from toolsets.governance.policies import (
    RateLimit,
    ResultCache,
    ValidArguments,
    validator_of,
)
from toolsets.grant_conditions import condition_feedback, url_arguments
from toolsets.models import Grant, ToolCall
from toolsets.reviews import record_declared
from toolsets.turn import (
    Answer,
    Call,
    Check,
    Offer,
    Step,
    ToolChoice,
    Turn,
)

# In a catalog-asked confirmation's payload: the Tool row that asked.
CATALOG_TOOL = PAYLOAD_CATALOG_TOOL


class Access(Check):
    """Offer and run only what access allows this user now."""

    status = ToolCall.Status.DENIED

    async def offer(
        self, *, step: Step, turn: Turn, request: LlmRequest, context: Context
    ) -> None:
        decisions = step.decisions = await _decisions(context.user_id, step)
        refused = {
            name
            for name, tool in request.tools_dict.items()
            if not is_internal(name, tool)
            and not _allowed(step.bindings.get(name), decisions)
        }
        prune_request(request, refused)

    async def check(self, *, call: Call, turn: Turn, context: Context) -> Answer | None:
        call.decision = await _decision_for(context, call)
        if call.decision.allowed:
            return None
        message = (
            f"Tool {call.tool.name} is not available to you: {call.decision.rule}."
        )
        return Answer(self.status, {"status": "error", "error_message": message})


class Review(Check):
    """Offer and run an imported tool only while what it declares now (its
    description and argument schema, as the server lists them at this step) is
    what staff approved (toolsets.reviews).

    A server can change a tool's description under a running deployment: a turn
    that finds the declaration changed keeps the new one in the catalog for staff
    to review (reviews.record_declared), and the tool is held until they approve it.
    """

    status = ToolCall.Status.UNREVIEWED

    async def offer(
        self, *, step: Step, turn: Turn, request: LlmRequest, context: Context
    ) -> None:
        step.held = {}
        snapshot = step.snapshot
        for name, tool in request.tools_dict.items():
            binding = step.bindings.get(name)
            if binding is None or is_internal(name, tool) or snapshot is None:
                continue
            row = snapshot.tools.get(binding.full_name)
            reason = await _held(binding, row)
            if reason:
                step.held[name] = reason
        prune_request(request, set(step.held))

    async def check(self, *, call: Call, turn: Turn, context: Context) -> Answer | None:
        if call.binding is None:
            return None
        held = call.step.held
        if held is None:  # a call with no model step in this run
            row = call.catalog_row or await access.acatalog_tool(call.full_name)
            reason = await _held(call.binding, row)
        else:
            reason = held.get(call.tool.name)
        if not reason:
            return None
        if call.decision is not None:
            call.decision = replace(call.decision, allowed=False, rule=reason)
        message = (
            f"Tool {call.tool.name} is not available: {reason}. Do not call it "
            "again in this conversation; tell the user an administrator must review "
            "it first."
        )
        return Answer(self.status, {"status": "error", "error_message": message})


async def _held(binding: Binding, row: access.CatalogTool | None) -> str:
    """Why an imported tool is held for review now ("" if it is not)."""
    if row is None or not row.reviewed:
        return ""
    description, parameters = declaration_of(binding.tool)
    live = digest_of(description, parameters)
    if live != row.digest:  # the server changed it since the catalog last read it
        await sync_to_async(record_declared)(
            full_name=binding.full_name, description=description, parameters=parameters
        )
    if not row.approved_digest:
        return "held for review: an administrator has not reviewed this new tool yet"
    if live != row.approved_digest:
        return (
            "held for review: its description or arguments changed since an "
            "administrator approved it"
        )
    return ""


class ArgumentConditions(Check):
    """Run a call of a tool allowed on a condition only with arguments within it.

    The condition is the one of the allow that decided access (Access, just
    before); an argument the tool declares a URL is judged as one
    (grant_conditions.url_arguments), and a fetch tool judges its redirects by the
    same condition (destinations.py). A call outside it is refused with feedback
    naming the condition, so the model can call again within it, and audited
    `denied` with the condition; or, when the grant says `otherwise: approval`,
    held for a person's approval (ApprovalGate), its audit naming the condition
    too.
    """

    status = ToolCall.Status.DENIED

    async def check(self, *, call: Call, turn: Turn, context: Context) -> Answer | None:
        decision = call.decision
        if decision is None or decision.condition is None:
            return None
        grant = call.narrowed_by = decision.rule.removeprefix("allowed by ")
        urls = url_arguments(validator_of(call.tool).schema, call.tool.custom_metadata)
        failed = decision.condition.failure(call.args, urls=urls)
        if failed is None:
            return None
        if decision.otherwise == Grant.Otherwise.APPROVAL:
            call.outside_condition = failed
            rule = f"held for approval: {failed}, outside the condition of {grant}"
            call.decision = replace(decision, rule=rule)
            return None
        rule = f"denied: {failed}, outside the condition of {grant}"
        call.decision = replace(decision, allowed=False, rule=rule)
        message = condition_feedback(call.tool.name, decision.condition, failed)
        return Answer(self.status, {"status": "error", "error_message": message})


class Activation(Check):
    """Offer and run only the tools of toolsets the agent has now (a conditional
    toolset's condition holds: toolsets.conditions) and that are active in the
    session.

    A call is judged by the toolsets at the model step that asked for it, so a call
    made in the same batch as a (de)activation sees the state before it.
    """

    status = ToolCall.Status.INACTIVE

    async def offer(
        self, *, step: Step, turn: Turn, request: LlmRequest, context: Context
    ) -> None:
        toolsets = {
            name: step.bindings[name].toolset.name
            for name, tool in request.tools_dict.items()
            if name in step.bindings and not is_internal(name, tool)
        }
        names = set(toolsets.values())
        step.absent = await _absent(context, names)
        step.inactive = await ainactive_toolsets(
            session=context.session,
            names=names - set(step.absent),
            snapshot=step.snapshot,
        )
        off = step.inactive | set(step.absent)
        prune_request(request, {name for name, ts in toolsets.items() if ts in off})

    async def check(self, *, call: Call, turn: Turn, context: Context) -> Answer | None:
        if call.binding is None:
            return None
        toolset = call.binding.toolset.name
        absent = call.step.absent
        if absent is None:  # a call with no model step in this run
            absent = await _absent(context, {toolset})
        if toolset in absent:
            message = (
                f"Tool {call.tool.name} is not available: its toolset {toolset} is "
                f"this agent's only {absent[toolset].describe()}."
            )
            return Answer(self.status, {"status": "error", "error_message": message})
        inactive = call.step.inactive
        if inactive is None:
            inactive = await ainactive_toolsets(
                session=context.session, names=[toolset], snapshot=call.step.snapshot
            )
        if toolset not in inactive:
            return None
        message = (
            f"Tool {call.tool.name} is not active: its toolset {toolset} is not "
            "active in this session."
        )
        return Answer(self.status, {"status": "error", "error_message": message})


async def _absent(context: Context, names: set[str]) -> dict[str, Condition]:
    return await aabsent_toolsets(
        agent=context.session.app_name,
        user_id=django_user_id(context.user_id),
        state=context.state,
        names=names,
    )


class Exposure(Check):
    """Availability: hidden and added tools and the first call's tool choice shape
    each step's offer; a call to a tool the step did not offer is refused."""

    status = ToolCall.Status.NOT_OFFERED

    async def offer(
        self, *, step: Step, turn: Turn, request: LlmRequest, context: Context
    ) -> None:
        offer = turn.offers.get(context.agent_name)
        if offer is None:  # this agent's first step in the turn
            tools = {name: binding.tool for name, binding in step.bindings.items()}
            hidden = {name for name, tool in tools.items() if is_hidden(tool)}
            offer = turn.offers[context.agent_name] = Offer(tools, hidden)
        prune_request(request, offer.hidden & set(request.tools_dict))
        if turn.model_calls == 1 and turn.tool_choice is not None:
            apply_tool_choice(request, turn.tool_choice)

    async def check(self, *, call: Call, turn: Turn, context: Context) -> Answer | None:
        offered = call.step.offered
        if offered is None or call.tool.name in offered:
            return None
        message = f"Tool {call.tool.name} is not available at this step."
        return Answer(self.status, {"status": "error", "error_message": message})


class Gates(Check):
    """Availability: the tool's own gates, then the agent's middleware; each may
    refuse with corrective feedback."""

    status = ToolCall.Status.GATED

    async def check(self, *, call: Call, turn: Turn, context: Context) -> Answer | None:
        offer = turn.offers.get(context.agent_name)
        if offer is None or call.step.offered is None:
            return None
        for gate in gates_of(offer.tools.get(call.tool.name, call.tool)):
            feedback = gate(dict(call.args), context)
            if inspect.isawaitable(feedback):
                feedback = await feedback
            if feedback:
                return Answer(self.status, refusal(feedback, self.status))
        agent = call.step.agent or context.get_invocation_context().agent
        middleware = middleware_of(agent)
        if not middleware:
            return None
        feedback = await arun_middleware(middleware, call.tool, call.args, context)
        if feedback:
            return Answer(self.status, refusal(feedback, self.status))
        call.middleware_ran = True
        return None


class ApprovalGate(Check):
    """Hold a call of a tool an administrator marks as needing approval, or a call
    outside the condition of a grant that says `otherwise: approval`.

    An administrator marks a tool in the catalog (Tool.requires_approval, with an
    optional approver group and timeout). For such a tool, whose code asks nothing,
    the gate asks ADK's tool confirmation itself, so the request, the decision and
    the resumed call are exactly those of a tool built with
    `require_confirmation=True` (agents.requests). The confirmation's payload
    carries who decides and when it expires, so the runtime records the request
    without reading the catalog, and in the catalog's words (its description, and
    whether the requester may decide it herself). The first call asks and does not
    run; the call ADK runs again once approved carries the decision, so it is not
    asked twice.
    """

    status = ToolCall.Status.AWAITING_APPROVAL
    rejected = ToolCall.Status.REJECTED

    async def check(self, *, call: Call, turn: Turn, context: Context) -> Answer | None:
        row = call.catalog_row
        if call.step.snapshot is None:
            row = await access.acatalog_tool(call.full_name)
        if row is None or not (row.requires_approval or call.outside_condition):
            return None
        confirmation = context.tool_confirmation
        if confirmation is None:
            hint = (
                f"An administrator requires approval for each call of {call.tool.name}."
                if row.requires_approval
                else f"An administrator requires approval for a call of "
                f"{call.tool.name} where {call.outside_condition}."
            )
            context.request_confirmation(
                hint=hint,
                payload={
                    CATALOG_TOOL: call.full_name,
                    PAYLOAD_APPROVER_GROUP: row.approver_group or "",
                    PAYLOAD_TIMEOUT: row.approval_timeout,
                    PAYLOAD_SELF_APPROVAL: row.requester_may_approve,
                    PAYLOAD_APPROVALS: _approvals_required(call, row),
                    PAYLOAD_DESCRIPTION: first_line(row.description),
                },
            )
            # A pause, not a result: the model must not be asked to go on.
            context.actions.skip_summarization = True
            message = "This tool call requires approval, please approve or reject."
            return Answer(self.status, {"error": message})
        if not confirmation.confirmed:
            return Answer(self.rejected, {"error": "This tool call is rejected."})
        return None


def _approvals_required(call: Call, row) -> int:
    """How many people must approve the call: the catalog tool's number, or, for a
    call outside its grant's condition, that grant's, if it asks more."""
    needed = row.approvals_required
    if call.outside_condition and call.decision is not None:
        needed = max(needed, call.decision.approvals_required)
    return needed


# The order, written once.
CHECKS: list[Check] = [
    Access(),
    Review(),
    ArgumentConditions(),
    Activation(),
    Exposure(),
    Gates(),
    ApprovalGate(),
    ValidArguments(),
    RateLimit(),
    ResultCache(),
]


# Access decisions.


async def _decisions(adk_user_id: str, step: Step) -> dict[str, Decision]:
    user_id = django_user_id(adk_user_id)
    if user_id is None:
        return {}
    names = {binding.full_name for binding in step.bindings.values()}
    return await access.aexplain_many(
        user_id=user_id, tools=names, snapshot=step.snapshot
    )


async def _decision_for(context: Context, call: Call) -> Decision:
    """The step's decision for the call's tool, else one taken now."""
    binding = call.binding
    if binding is None:
        rule = f"{call.tool.name} is not a tool of agent {context.agent_name}"
        return Decision(False, rule, Reason.UNKNOWN)
    decided = call.step.decisions.get(binding.full_name)
    if decided is not None:
        return decided
    user_id = django_user_id(context.user_id)
    if user_id is None:
        return Decision(False, f"{context.user_id!r} is not a user", Reason.UNKNOWN)
    return await access.aexplain(
        user_id=user_id, tool=binding.full_name, snapshot=call.step.snapshot
    )


def _allowed(binding: Binding | None, decisions: Mapping[str, Decision]) -> bool:
    if binding is None:
        return False
    decision = decisions.get(binding.full_name)
    return decision is not None and decision.allowed


def django_user_id(adk_user_id: str) -> int | None:
    """The Django user an ADK user id names (Toolcrib's are user pks), if any."""
    return int(adk_user_id) if adk_user_id.isdigit() else None


# Shaping a model step's request.


def prune_request(llm_request: LlmRequest, names: set[str]) -> None:
    """Remove tools from a request: the declarations, tools_dict and tool_config."""
    if not names:
        return
    for name in names:
        llm_request.tools_dict.pop(name, None)
    kept_tools = []
    for tool in llm_request.config.tools or []:
        declarations = getattr(tool, "function_declarations", None)
        if not declarations:
            kept_tools.append(tool)
            continue
        tool.function_declarations = [d for d in declarations if d.name not in names]
        if tool.function_declarations or _has_other_capabilities(tool):
            kept_tools.append(tool)
    llm_request.config.tools = kept_tools or None
    calling = llm_request.config.tool_config and (
        llm_request.config.tool_config.function_calling_config
    )
    if calling and calling.allowed_function_names:
        calling.allowed_function_names = [
            n for n in calling.allowed_function_names if n not in names
        ]


def _has_other_capabilities(tool: types.Tool) -> bool:
    fields = tool.model_dump(exclude_none=True, exclude={"function_declarations"})
    return bool(fields)


def apply_tool_choice(llm_request: LlmRequest, choice: ToolChoice) -> None:
    """Shape a first model call by its tool choice, among the tools offered now."""
    if choice.mode == "none":
        prune_request(llm_request, set(llm_request.tools_dict))
    elif choice.mode != "required" or not llm_request.tools_dict:
        return
    elif choice.function is None:
        _set_calling(llm_request, [])
    elif choice.function in llm_request.tools_dict:
        force(llm_request, choice.function)


def force(llm_request: LlmRequest, name: str) -> None:
    """Make this call call `name`: only it declared, tool_config ANY on it."""
    others = {n for n in llm_request.tools_dict if n != name}
    prune_request(llm_request, others)
    _set_calling(llm_request, [name])


def _set_calling(llm_request: LlmRequest, allowed: list[str]) -> None:
    """tool_config ANY: the model must call a tool (one of `allowed`, if given)."""
    llm_request.config.tool_config = types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(
            mode=types.FunctionCallingConfigMode.ANY,
            allowed_function_names=allowed or None,
        )
    )
