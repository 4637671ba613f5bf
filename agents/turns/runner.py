"""A turn's ADK Runner, assembled: the session's agent tree, the Django services
(agents.adk), the plugins of TOOLCRIB_PLUGINS, the run config, and the message the
turn runs with. drive.py runs what assemble() returns and owns the turn's end.

What the turn reads as it is assembled, in order: the session's window (what the
model is sent, adk/history.py); the agent tree, the user's budgets and the session
read ahead for the Runner, in one thread hop (a model the session's owner picked
replaces the root agent's, checked again: agents.model_picks); the models prepared
(an unconfigured one refuses the turn before anything is stored or any model is
called). Model grants are checked before each model step (ModelGrantPlugin).
"""

from collections.abc import Callable
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.conf import settings
from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode, ToolThreadPoolConfig
from google.adk.apps import App
from google.adk.events import Event as AdkEvent
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

from agents.adk import history, providers
from agents.adk.artifacts import DjangoArtifactService
from agents.adk.budget_plugin import BudgetPlugin
from agents.adk.builder import agent_for
from agents.adk.credentials import DjangoCredentialService, ahydrate_message
from agents.adk.memory import DjangoMemoryService
from agents.adk.sessions import DjangoSessionService
from agents.adk.telemetry import turn_telemetry
from agents.events.wire import Sender, sender_of
from agents.model_picks import turn_model
from agents.models import Budget, Run
from agents.plugins import plugins_for
from agents.usage import acheck_budget, budgets_of


@dataclass
class Assembled:
    """What a turn runs: ADK's Runner and what to run it with."""

    runner: Runner
    # The session service that stores the turn's events (its seqs: seq_of).
    service: DjangoSessionService
    root: BaseAgent
    config: RunConfig
    message: types.Content
    # A budget applies to the turn's user: its tokens are stored as they come.
    budgeted: bool


def turn_run_config(*, window: GetSessionConfig | None) -> RunConfig:
    """How a turn runs ADK's Runner: the answer streamed (SSE), the tools' thread
    pool, the session's window, and lean telemetry. bench.adk_runner's floor runs
    ADK's bare Runner with this same config."""
    return RunConfig(
        streaming_mode=StreamingMode.SSE,
        tool_thread_pool_config=ToolThreadPoolConfig(
            max_workers=settings.TOOLCRIB_TOOL_THREADS
        ),
        get_session_config=window,
        # ADK's telemetry without the whole model request in span attributes.
        telemetry=turn_telemetry(),
    )


async def assemble(run: Run, *, on_stored: Callable[[AdkEvent], None]) -> Assembled:
    """The Runner of the claimed `run`, its model named on the Run (run.model).

    `on_stored` is called in the thread hop that stored each event (the drive notes
    the Run's invocation id there)."""
    session = run.session
    sender = turn_sender(run)
    service = DjangoSessionService(
        sender_id=sender.id if sender else None,
        on_stored=on_stored,
    )
    # What the turn reads of the session, and so what the model is sent.
    window = await history.aturn_window(agent=session.agent, run=run)
    root, budgets = await sync_to_async(_set_up)(run, service, window)
    # Refused before anything is stored or any model is called.
    await providers.aprepare_models(root)
    run.model = _model_name(root)
    # With a budget, a running turn's tokens are stored as they come (budgets read
    # them); with none, they are stored once, when the turn ends.
    budgeted = bool(
        await acheck_budget(user_id=run.user_id, model=run.model, budgets=budgets)
    )
    plugins = plugins_for(run=run)
    for plugin in plugins:
        if isinstance(plugin, BudgetPlugin):
            plugin.budgets = budgets  # read once a turn: here, with the agent
    app = App(name=session.app_name, root_agent=root, plugins=plugins)
    runner = Runner(
        app=app,
        session_service=service,
        artifact_service=DjangoArtifactService(),
        memory_service=DjangoMemoryService(),
        credential_service=DjangoCredentialService(),
    )
    message = _message_of(run)
    if run.message:  # A credential answer's secret comes back here, in memory only.
        message = await ahydrate_message(
            message,
            owner_id=session.owner_id or run.user_id,
            app_name=session.app_name,
        )
    return Assembled(
        runner=runner,
        service=service,
        root=root,
        config=turn_run_config(window=window),
        message=message,
        budgeted=budgeted,
    )


def turn_sender(run: Run) -> Sender | None:
    """Who sent the turn's message: its Run's user for a typed message; none for
    function responses (an answer's author is on its request: answered_by)."""
    return None if run.message else sender_of(run.user)


def _set_up(
    run: Run, service: DjangoSessionService, window: GetSessionConfig | None
) -> tuple[BaseAgent, list[Budget]]:
    """The session's agent tree (on the model its owner picked, checked again:
    agents.model_picks), the user's budgets, and the session read ahead for ADK's
    Runner (the turn's window of it): one thread hop for all."""
    session = run.session
    picked = turn_model(session=session, user_id=run.user_id)
    service.read_ahead(
        app_name=session.app_name,
        user_id=session.user_id,
        session_id=session.adk_id,
        config=window or GetSessionConfig(),
    )
    root = agent_for(session.agent)
    if picked and isinstance(root, LlmAgent):
        # A copy: the built tree is every session's of this agent.
        root = root.clone(update={"model": picked})
    return root, budgets_of(user_id=run.user_id)


def _model_name(agent: BaseAgent) -> str:
    """The agent's model name as resolved; "" for an agent without a model."""
    if not isinstance(agent, LlmAgent):
        return ""
    model = agent.model if isinstance(agent.model, str) and agent.model else None
    model = model or getattr(agent.canonical_model, "model", "")
    return str(model or "")[:200]


def _message_of(run: Run) -> types.Content:
    if run.message:
        return types.Content.model_validate(run.message)
    return types.Content(role="user", parts=[types.Part(text=run.text)])
