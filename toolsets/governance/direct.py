"""Running one tool directly, outside any model turn (`POST /api/tools/{name}/invoke/`).

A direct call goes through the very pipeline a model's call does: ADK's own tool
caller (`handle_function_call_list_async`) runs it with the plugins of a turn, so
GovernancePlugin decides and audits it as any call, by the same checks (access,
the approval gates, the policy's validation, rate limit and result cache) and the
same run (timeout, retries, concurrency slots), and ToolAuthPlugin hands a REST
tool its credential. Its ToolCall row is the GoAgent ToolCall: the direct call's
answer (`Invocation`) is read from it, timings and attempts included.

What a direct call has not: a session, a model, an agent. So:
- activation (a session's active toolsets) and availability (what a model step
  offered, a tool's gates, an agent's middleware) do not apply: they shape what a
  model is offered and may call within a turn;
- the call runs with a session of its own that lasts the call: empty state, and
  an in-memory artifact store (CallArtifactService: files it writes are not kept);
- a call that needs a person (an approval, from the catalog or the tool's own
  `require_confirmation`, or a credential the user never gave for this use) has
  nobody to ask: it does not run, its row is `refused`, and the caller gets
  NeedsPerson (409), to call the tool from a session instead. A caller that can
  hold a call for approval (the MCP gateway) uses arun_tool instead: the call is
  returned `held` (its row `awaiting_approval`, with who decides it), and once
  approved it runs again with `confirmed`, through every check again;
- the plugins of TOOLCRIB_PLUGINS that account for a turn's Run (a `for_run`
  class, such as the model budget) are left out: there is no model call.
"""

import copy
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _
from google.adk.agents import LlmAgent
from google.adk.agents.invocation_context import (
    InvocationContext,
    new_invocation_context_id,
)
from google.adk.agents.run_config import RunConfig, ToolThreadPoolConfig
from google.adk.artifacts import InMemoryArtifactService
from google.adk.artifacts.base_artifact_service import ArtifactVersion
from google.adk.events import Event
from google.adk.flows.llm_flows.functions import handle_function_call_list_async
from google.adk.plugins import BasePlugin
from google.adk.plugins.plugin_manager import PluginManager
from google.adk.sessions import InMemorySessionService
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

from agents.pauses import (
    approval_rule,
    approvals_required,
    requester_may_approve,
    tool_description,
)
from agents.runtime import DjangoCredentialService
from project.errors import DomainError, ForbiddenError, NotFoundError
from toolsets.bindings import Binding
from toolsets.call_totals import recount
from toolsets.code import arunnable
from toolsets.governance.plugin import GovernancePlugin
from toolsets.models import Tool, ToolCall
from toolsets.turn import Audited, Step

# A direct call's ADK agent and app: the audit's `adk_agent` and (empty) `agent`.
DIRECT_AGENT = "direct_call"
DIRECT_APP = ""
CALL_ID_PREFIX = "direct-"


class ToolInput(BaseModel):
    """A direct call's body, as the GoAgent ToolInput: the tool's arguments."""

    model_config = ConfigDict(extra="forbid")

    args: dict[str, Any] = Field(
        default_factory=dict, description="The tool's arguments, as its schema says."
    )


@dataclass(frozen=True)
class Held:
    """A call held for a person's approval: what it asks, and who decides it, by
    the tool's marks and the catalog's approval gate (agents.adk.long_running)."""

    call_id: str
    hint: str
    answer_group: str
    timeout: float | None
    self_approval: bool
    description: str
    approvals_required: int = 1


@dataclass(frozen=True)
class Invocation:
    """How a direct call ended (the GoAgent ToolOutput and ToolCall): its audit row,
    and what the model would have read; `held` if it waits for an approval, and
    `asks_credential` if it waits for a credential of the user's."""

    call: ToolCall
    response: dict[str, Any]
    held: Held | None = None
    asks_credential: bool = False

    @property
    def needs_person(self) -> bool:
        return self.held is not None or self.asks_credential

    @property
    def success(self) -> bool:
        return self.call.status in (ToolCall.Status.OK, ToolCall.Status.CACHED)

    @property
    def error(self) -> str | None:
        if self.success:
            return None
        for key in ("error", "error_message"):
            if isinstance(self.response.get(key), str):
                return self.response[key]
        return self.call.result_summary or self.call.status


# The refusals of a direct call: the ones a turn tells the model, as errors.


class ToolDenied(ForbiddenError):
    """Access refuses this tool to this user (the rule says why)."""

    code = "denied"


class ToolHeld(ForbiddenError):
    """An imported tool waits for staff review of what it declares (new, or its
    description changed since it was approved)."""

    code = "unreviewed"


class InvalidArguments(DomainError):
    """The arguments do not match the tool's schema; the tool did not run."""

    code = "invalid_args"
    field = "args"


class ToolBusy(DomainError):
    """The tool's rate limit, or its concurrency limit, refused the call."""

    status_code = 429
    code = "busy"


class NeedsPerson(DomainError):
    """The call needs a person's approval or credential: call it from a session."""

    status_code = 409
    code = "needs_person"


REFUSALS: dict[str, type[DomainError]] = {
    ToolCall.Status.DENIED: ToolDenied,
    ToolCall.Status.UNREVIEWED: ToolHeld,
    ToolCall.Status.INVALID_ARGS: InvalidArguments,
    ToolCall.Status.RATE_LIMITED: ToolBusy,
    ToolCall.Status.BUSY: ToolBusy,
}


async def ainvoke_tool(
    *, user, full_name: str, args: Mapping[str, Any], agent: str = DIRECT_APP
) -> Invocation:
    """Run one catalogued tool for `user` now, governed and audited as in a turn.

    `agent` is what the audit names as the agent (an MCP client's name, for the
    gateway); a call of the API names none.

    Raises NotFoundError (no such tool), ToolGone (its code is missing), a refusal
    of REFUSALS, or NeedsPerson; a tool that ran, failed or timed out is an
    Invocation either way.
    """
    invocation = await arun_tool(user=user, full_name=full_name, args=args, agent=agent)
    if invocation.needs_person:
        await arefuse(invocation.call, "needs a person")
        raise NeedsPerson(
            _(
                "%(invocation_call_tool_name)s needs a person's approval or a credential before it runs, and a direct call has nobody to ask: call it from a session."
            )
            % {"invocation_call_tool_name": invocation.call.tool_name}
        )
    return invocation


async def arun_tool(
    *,
    user,
    full_name: str,
    args: Mapping[str, Any],
    agent: str = DIRECT_APP,
    confirmed: bool = False,
    decision: Mapping[str, Any] | None = None,
) -> Invocation:
    """Run one catalogued tool for `user` now; a call that needs a person is
    returned as it is, held (see ainvoke_tool, which refuses it).

    `confirmed`: a person approved this call (its Held request): it runs through
    every check again, and the approval gates let it pass. `decision`: what she
    decided beyond yes (the confirmation's payload: the arguments she changed the
    call to, and who did), as a turn's resumed call carries it.

    Raises NotFoundError (no such tool), ToolGone, or a refusal of REFUSALS.
    """
    row = (
        await Tool.objects.select_related("toolset")
        .filter(full_name=full_name)
        .afirst()
    )
    if row is None or row.missing:
        raise NotFoundError(
            _("No such tool: %(full_name)s.") % {"full_name": full_name}
        )
    async with arunnable(row) as binding:
        call_id, event, root = await _run(
            user_id=user.pk,
            binding=binding,
            args=args,
            agent=agent,
            confirmed=confirmed,
            decision=decision,
        )
    audited = await ToolCall.objects.filter(user_id=user.pk, call_id=call_id).aget()
    response = _response_of(event)
    refusal = REFUSALS.get(audited.status)
    if refusal is not None:
        raise refusal(response.get("error_message") or audited.result_summary)
    held = None
    if audited.status == ToolCall.Status.AWAITING_APPROVAL:
        held = _held(event, root, call_id=call_id, tool_name=binding.name)
    return Invocation(
        audited, response, held=held, asks_credential=_asks_credential(event)
    )


async def _run(
    *,
    user_id: int,
    binding: Binding,
    args: Mapping[str, Any],
    agent: str,
    confirmed: bool = False,
    decision: Mapping[str, Any] | None = None,
) -> tuple[str, Event | None, LlmAgent]:
    """Run the call through ADK's tool pipeline; its call id, response event and
    the agent it ran in."""
    tool = binding.tool
    if tool.name != binding.name:  # a prefixed toolset's tool, as ADK copies it
        tool = copy.copy(tool)
        tool.name = binding.name
    governance = GovernancePlugin()
    invocation = await _invocation(user_id, tool, governance, agent)
    turn = governance.turns.start(invocation.invocation_id)
    # No model step: nothing was offered, nothing is inactive, no session to name.
    turn.steps[DIRECT_AGENT] = Step({tool.name: binding}, offered=None, inactive=set())
    turn.audited = Audited(session_id="", run_id=None)
    call_id = f"{CALL_ID_PREFIX}{uuid.uuid4().hex}"
    call = types.FunctionCall(id=call_id, name=tool.name, args=dict(args))
    approved = None
    if confirmed:
        payload = dict(decision) if decision else None
        approved = {call_id: ToolConfirmation(confirmed=True, payload=payload)}
    try:
        event = await handle_function_call_list_async(
            invocation, [call], {tool.name: tool}, tool_confirmation_dict=approved
        )
    finally:
        governance.turns.end(invocation.invocation_id)
    return call_id, event, invocation.agent


class CallArtifactService(InMemoryArtifactService):
    """ADK's in-memory artifact store for one direct call: what it saves lasts the
    call (docs/permissions.md).

    The call's session is named after the agent its audit row names: none for an
    API call, and ADK's stores refuse an empty app name (InputValidationError, a
    ValueError, which a tool reads as no artifact service at all). This store
    files every artifact under DIRECT_AGENT instead: it holds one call's files,
    so the name tells nothing apart.
    """

    async def save_artifact(self, *, app_name: str, **kwargs: Any) -> int:
        return await super().save_artifact(app_name=DIRECT_AGENT, **kwargs)

    async def load_artifact(self, *, app_name: str, **kwargs: Any) -> types.Part | None:
        return await super().load_artifact(app_name=DIRECT_AGENT, **kwargs)

    async def list_artifact_keys(self, *, app_name: str, **kwargs: Any) -> list[str]:
        return await super().list_artifact_keys(app_name=DIRECT_AGENT, **kwargs)

    async def delete_artifact(self, *, app_name: str, **kwargs: Any) -> None:
        await super().delete_artifact(app_name=DIRECT_AGENT, **kwargs)

    async def list_versions(self, *, app_name: str, **kwargs: Any) -> list[int]:
        return await super().list_versions(app_name=DIRECT_AGENT, **kwargs)

    async def list_artifact_versions(
        self, *, app_name: str, **kwargs: Any
    ) -> list[ArtifactVersion]:
        return await super().list_artifact_versions(app_name=DIRECT_AGENT, **kwargs)

    async def get_artifact_version(
        self, *, app_name: str, **kwargs: Any
    ) -> ArtifactVersion | None:
        return await super().get_artifact_version(app_name=DIRECT_AGENT, **kwargs)


async def _invocation(
    user_id: int, tool: Any, governance: GovernancePlugin, agent: str
) -> InvocationContext:
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name=agent, user_id=str(user_id))
    threads = ToolThreadPoolConfig(max_workers=settings.TOOLCRIB_TOOL_THREADS)
    return InvocationContext(
        session_service=sessions,
        artifact_service=CallArtifactService(),
        credential_service=DjangoCredentialService(),
        invocation_id=new_invocation_context_id(),
        agent=LlmAgent(name=DIRECT_AGENT, tools=[tool]),
        session=session,
        run_config=RunConfig(tool_thread_pool_config=threads),
        plugin_manager=PluginManager(plugins=_plugins(governance)),
    )


def _plugins(governance: GovernancePlugin) -> list[BasePlugin]:
    """TOOLCRIB_PLUGINS as a call needs them: governance (always), and every
    plugin that is not a turn's accounting (a `for_run` class)."""
    plugins: list[BasePlugin] = []
    for path in settings.TOOLCRIB_PLUGINS:
        plugin_class = import_string(path)
        if issubclass(plugin_class, GovernancePlugin):
            plugins.append(governance)
        elif not hasattr(plugin_class, "for_run"):
            plugins.append(plugin_class())
    if governance not in plugins:
        plugins.insert(0, governance)
    return plugins


def _response_of(event: Event | None) -> dict[str, Any]:
    responses = event.get_function_responses() if event is not None else []
    return dict(responses[0].response or {}) if responses else {}


def _asks_credential(event: Event | None) -> bool:
    return bool(event is not None and event.actions.requested_auth_configs)


def _held(event: Event | None, root: LlmAgent, *, call_id: str, tool_name: str) -> Held:
    """What the held call asks, and who decides it: the tool's marks, else the
    confirmation's payload (the catalog's approval gate), as a turn records it."""
    asked = event.actions.requested_tool_confirmations if event is not None else {}
    confirmation = asked.get(call_id) or ToolConfirmation()
    payload = confirmation.payload if isinstance(confirmation.payload, dict) else {}
    group, timeout = approval_rule(
        root, author=DIRECT_AGENT, tool_name=tool_name, payload=payload
    )
    return Held(
        call_id=call_id,
        hint=confirmation.hint,
        answer_group=group,
        timeout=timeout,
        self_approval=requester_may_approve(payload),
        description=tool_description(
            root, author=DIRECT_AGENT, tool_name=tool_name, payload=payload
        ),
        approvals_required=approvals_required(payload),
    )


async def arefuse(audited: ToolCall, why: str) -> None:
    """A call held for a person nobody can be: refused, never held."""
    audited.status = ToolCall.Status.REFUSED
    audited.result_summary = f"{why}: a direct call cannot wait for one"
    await sync_to_async(recount)(
        ToolCall.objects.filter(pk=audited.pk),
        status=audited.status,
        result_summary=audited.result_summary,
    )
