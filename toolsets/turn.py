"""What governance keeps for one turn (an ADK invocation), and how a tool finds it.

GovernancePlugin keeps one Turn per invocation id on itself, and drops it when the
invocation ends (after_run, or on_run_error). agents.plugins builds the plugin for
each turn, so a turn cut short (cancelled by the turn timeout) leaves nothing behind
either: its plugin goes with its Runner. Nothing here is process-global.

Code running inside a turn (a tool calling add_tools, a gate reading turn_data, the
run wrapper of execution.py) reaches its Turn from its context through the
invocation's plugin manager: `turn_of(context)`.
"""

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone
from google.adk.agents import BaseAgent
from google.adk.agents.context import Context
from google.adk.models import LlmRequest
from google.adk.tools import BaseTool

from toolsets.access import CatalogTool, Decision, Snapshot
from toolsets.bindings import Binding
from toolsets.conditions import Condition
from toolsets.policies import POLICY_ATTR, ToolPolicy, apolicy_for, settings_policy

PLUGIN_NAME = "toolcrib_governance"


@dataclass
class Step:
    """One agent's latest model step: its bindings and access as of one reading of
    the version counters (`snapshot`: the catalog, and the session's activation
    token), resolved once and reused by the step's calls, and what the checks made
    of it: a change made after the step counts from the next one.

    `offered`, `inactive` and `absent` are None for a call with no model step in
    this run (a call ADK runs again once a person approved it): the checks then
    decide without.
    """

    bindings: dict[str, Binding]
    snapshot: Snapshot | None = None
    agent: BaseAgent | None = None  # the ADK agent of the step
    decisions: dict[str, Decision] = field(default_factory=dict)  # by full name
    offered: set[str] | None = None
    inactive: set[str] | None = None
    absent: dict[str, Condition] | None = None  # conditional toolsets not had now
    # Imported tools held for staff review (checks.Review), and why: by call name.
    held: dict[str, str] | None = None


@dataclass
class Offer:
    """One agent's tools in one turn, as its tools hide, expose and add them.

    `added` are the tools a tool of the turn added (availability.add_tools) that the
    agent does not declare, bound to the adding tool's toolset; `fresh` those of
    them the catalog has not been told about in this turn yet.
    """

    tools: dict[str, BaseTool] = field(default_factory=dict)
    hidden: set[str] = field(default_factory=set)
    added: dict[str, Binding] = field(default_factory=dict)
    fresh: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class ToolChoice:
    """How the first model call of a turn may use tools: mode `auto`, `none` or
    `required`, and for `required`, maybe the one function to call."""

    mode: str
    function: str | None = None


@dataclass(frozen=True)
class Answer:
    """A check's answer to a call instead of its run: the audit status, and what the
    model reads."""

    status: str
    response: dict[str, Any]


@dataclass
class Call:
    """One governed call, from before_tool to its audit row."""

    tool: BaseTool
    args: Mapping[str, Any]
    step: Step
    binding: Binding | None
    started_at: datetime = field(default_factory=timezone.now)
    started: float = field(default_factory=time.perf_counter)
    decision: Decision | None = None  # access's, set by the access check
    # The grant whose condition narrows the call, in words (ArgumentConditions).
    narrowed_by: str | None = None
    # Why the call is outside its allow's condition, when that asks for approval.
    outside_condition: str | None = None
    answer: Answer | None = None  # the check that answered it, if one did
    policy: ToolPolicy | None = None
    result_key: str | None = None  # where a result is cached (policy cache_ttl)
    middleware_ran: bool = False  # the agent's middleware let it through (Gates)
    watched: bool = False  # its run goes through execution.py's wrapper
    dispatched: bool = False  # ADK ran it: the wrapper was entered
    attempts: int = 0
    outcome: str | None = None  # how the run ended, when not plainly (busy, timeout)
    # The arguments asked, when an approver changed them before approving, and who.
    asked_args: dict[str, Any] | None = None
    edited_by: int | None = None
    # A person approved it (its held row says who and when): ADK runs it again.
    approved: bool = False

    @property
    def full_name(self) -> str:
        return self.binding.full_name if self.binding else ""

    @property
    def catalog_row(self) -> CatalogTool | None:
        """The catalog's row of the tool, as of the call's model step."""
        snapshot = self.step.snapshot
        return snapshot.tools.get(self.full_name) if snapshot is not None else None

    async def apolicy(self) -> ToolPolicy:
        """The call's effective policy, read once (code, settings, admin override)."""
        if self.policy is None:
            if self.binding is None:
                raise RuntimeError(f"{self.tool.name} is not bound: it has no policy")
            if self.step.snapshot is None:
                full_name, tool = self.binding.full_name, self.binding.tool
                self.policy = await apolicy_for(full_name, tool)
            else:
                self.policy = policy_of(self.binding, self.catalog_row)
        return self.policy


MAX_POLICIES = 4096

# What a policy is made of (the code's, the settings', the admin's) -> the policy:
# merged once per process, not at every call.
_policies: dict[tuple[str, str, str], ToolPolicy] = {}


def policy_of(binding: Binding, row: CatalogTool | None) -> ToolPolicy:
    """toolsets.policies.apolicy_for(), with the catalog row already at hand."""
    tool = binding.tool
    code = getattr(getattr(tool, "func", tool), POLICY_ATTR, None)
    declared = code or getattr(tool, POLICY_ATTR, {})
    overrides = getattr(settings, "TOOLCRIB_TOOL_POLICIES", {})
    admin = (row.policy_override if row else None) or {}
    key = (repr(declared), repr(overrides.get(binding.full_name)), repr(admin))
    found = _policies.get(key)
    if found is None:
        if len(_policies) >= MAX_POLICIES:
            _policies.clear()
        found = _policies[key] = settings_policy(binding.full_name, tool).merged(admin)
    return found


@dataclass(frozen=True)
class Audited:
    """What the audit names a turn's calls' session by: its row, and its Run."""

    session_id: str
    run_id: uuid.UUID | None


@dataclass(frozen=True)
class Result:
    """A call's audited result, until its function response event says what the
    model received (a callback after governance's may have changed it)."""

    raw: Any
    summary: str
    started_at: datetime


@dataclass
class Turn:
    """One invocation: each agent's step and offer, its calls, data its tools share."""

    steps: dict[str, Step] = field(default_factory=dict)
    offers: dict[str, Offer] = field(default_factory=dict)
    calls: dict[str, Call] = field(default_factory=dict)
    model_calls: int = 0
    tool_choice: ToolChoice | None = None  # for the first model call
    data: dict[str, Any] = field(default_factory=dict)
    audited: Audited | None = None
    results: dict[str, Result] = field(default_factory=dict)  # by call id


class Turns:
    """The Turn of each running invocation, kept by one GovernancePlugin."""

    def __init__(self) -> None:
        self._by_invocation: dict[str, Turn] = {}

    def start(self, invocation_id: str) -> Turn:
        """The invocation's Turn, begun on its first use."""
        turn = self._by_invocation.get(invocation_id)
        if turn is None:
            turn = self._by_invocation[invocation_id] = Turn()
        return turn

    def get(self, invocation_id: str) -> Turn | None:
        return self._by_invocation.get(invocation_id)

    def end(self, invocation_id: str) -> None:
        self._by_invocation.pop(invocation_id, None)

    def clear(self) -> None:
        self._by_invocation.clear()

    def __len__(self) -> int:
        return len(self._by_invocation)


def turn_of(context: Any) -> Turn | None:
    """The Turn of the invocation a context belongs to; None outside a governed turn."""
    get_invocation = getattr(context, "get_invocation_context", None)
    if get_invocation is None:
        return None
    invocation = get_invocation()
    plugin = invocation.plugin_manager.get_plugin(PLUGIN_NAME)
    turns = getattr(plugin, "turns", None)
    if not isinstance(turns, Turns):
        return None
    return turns.get(invocation.invocation_id)


def call_of(context: Any) -> Call | None:
    """The governed call a tool's context runs, if any (by its function call id)."""
    turn = turn_of(context)
    call_id = getattr(context, "function_call_id", None)
    if turn is None or not call_id:
        return None
    return turn.calls.get(call_id)


def call_key(context: Context, tool: BaseTool) -> str:
    """One call's identity across the callbacks and the run."""
    return context.function_call_id or f"{context.invocation_id}:{tool.name}"


class Check:
    """One check of governance: it may narrow what a model step offers, and may
    answer a call instead of letting it run (checks.CHECKS gives the order)."""

    async def offer(
        self, *, step: Step, turn: Turn, request: LlmRequest, context: Context
    ) -> None:
        """Remove from this model step's request what this check refuses."""

    async def check(self, *, call: Call, turn: Turn, context: Context) -> Answer | None:
        """An answer that refuses (or serves) the call, or None to let it go on."""
        return None
