"""An AgentTool's agent runs in the caller's session, as a single-turn sub-agent does.

ADK's AgentTool runs its agent in a throwaway in-memory session (ADK_NOTES.md §3.12):
none of the child's events reach the session or the stream, and its tools belong to
no toolset of the agent they run under, so governance cannot allow them. When an
agent is loaded (agents.adk.builder), each AgentTool of an LlmAgent whose agent is
an LlmAgent is adopted instead:

- a copy of its agent, in mode `single_turn`, becomes a sub-agent of the LlmAgent
  that holds the tool (single-turn sub-agents are never transfer targets);
- the tool, a SessionAgentTool, keeps its name, declaration and
  skip_summarization, and runs that copy as ADK runs a single-turn sub-agent: in
  the caller's invocation and session, on the branch `<agent>@<call id>`, so its
  calls, results and answer are stored, streamed and audited like a sub-agent's;
- its tools are the sub-agent's: catalogued and governed under the code agent's
  toolset.

ADK's own single-turn tool (a private class) does the running; this module only
adds what AgentTool promised on top (skip_summarization) and the adoption.

An agent run as a tool (every single-turn agent of the tree: an adopted AgentTool's,
or one written so) answers its caller and nobody else. ADK would offer it
`transfer_to_agent` to its parent, its peers and its chat sub-agents, and a
transfer from inside the tool runs the target on the tool's branch and leaves the
tool without an answer (`{"result": null}`). So, with ADK's own flags, it is
offered no transfer to its parent or peers (a call to `transfer_to_agent` anyway
is answered with ADK's "no such tool" error, which the model reads), and a tree in
which it has sub-agents it could transfer to (not single-turn or task agents,
which are its tools) is refused when it loads.
"""

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.tools.agent_tool import AgentTool, _SingleTurnAgentTool
from google.adk.workflow import BaseNode

from agents.adk.nodes import walk_agents

MAX_DEPTH = 8
# Modes of agents that ADK runs as tools of their parent, never transfers to.
TOOL_MODES = ("single_turn", "task")


# ADK 2.13's AgentTool reads its agent's `sub_agents`, which a Workflow (a node,
# no agent) has not: ADK fails the first call, and any listing of its declaration.
_NOT_AN_AGENT = (
    "agent {0}: the AgentTool {1!r} wraps a workflow, which ADK's AgentTool cannot "
    "run; put the Workflow itself in the agent's tools (ADK calls it as a tool)"
)


class AgentToolError(ValueError):
    """An AgentTool's agent cannot join the tree (its name is taken, or it loops)."""


class SessionAgentTool(_SingleTurnAgentTool):
    """An AgentTool whose agent runs in the caller's session (see the module)."""

    async def run_async(self, *, args, tool_context):
        """Run the agent on its own branch of the session; its answer is the result."""
        if self.skip_summarization:
            tool_context.actions.skip_summarization = True
        return await super().run_async(args=args, tool_context=tool_context)


def adopt_agent_tools(root: BaseNode, *, depth: int = 0) -> None:
    """Make every AgentTool of the tree run its agent in the session; idempotent.

    Raises:
        AgentToolError: An AgentTool's agent is no agent (a Workflow), or is named as
            an agent of the tree already,
            AgentTools nest deeper than MAX_DEPTH, or an agent run as a tool has a
            sub-agent it could transfer to.
    """
    if depth > MAX_DEPTH:
        raise AgentToolError(f"agent {root.name}: agents used as tools nest too deep")
    for agent in _walk(root):
        if not isinstance(agent, LlmAgent):
            continue
        for index, tool in enumerate(agent.tools):
            if isinstance(tool, SessionAgentTool) and tool.agent.parent_agent is agent:
                continue
            if isinstance(tool, SessionAgentTool):  # copied along with a clone
                agent.tools[index] = _readopt(agent, tool)
            elif isinstance(tool, AgentTool) and not isinstance(tool.agent, BaseAgent):
                raise AgentToolError(_NOT_AN_AGENT.format(agent.name, tool.name))
            elif type(tool) is AgentTool and isinstance(tool.agent, LlmAgent):
                agent.tools[index] = _adopt(agent, tool)
                adopt_agent_tools(agent.tools[index].agent, depth=depth + 1)
    for agent in _walk(root):
        if isinstance(agent, LlmAgent) and agent.mode == "single_turn":
            _keep_in_its_tool(agent)


def _keep_in_its_tool(agent: LlmAgent) -> None:
    """Offer an agent run as a tool no transfer out of it (see the module)."""
    targets = [
        sub.name
        for sub in agent.sub_agents
        if getattr(sub, "mode", None) not in TOOL_MODES
    ]
    if targets:
        raise AgentToolError(
            f"agent {agent.name} runs as a tool, and a transfer to its sub-agent "
            f"{', '.join(targets)} would leave the tool without an answer; make "
            f"them mode='single_turn', tools of {agent.name}"
        )
    agent.disallow_transfer_to_parent = True
    agent.disallow_transfer_to_peers = True


def _adopt(parent: LlmAgent, tool: AgentTool) -> SessionAgentTool:
    if parent.root_agent.find_agent(tool.agent.name) is not None:
        raise AgentToolError(
            f"agent {parent.name}: its tool {tool.name} runs an agent named like an "
            "agent of its tree already; rename one"
        )
    child = tool.agent.clone(update={"mode": "single_turn"})
    child.parent_agent = parent
    parent.sub_agents.append(child)
    return SessionAgentTool(
        child,
        tool.skip_summarization,
        include_plugins=tool.include_plugins,
        propagate_grounding_metadata=tool.propagate_grounding_metadata,
    )


def _readopt(parent: LlmAgent, tool: SessionAgentTool) -> SessionAgentTool:
    """A clone's tool points at the original's sub-agent: point it at the clone's."""
    child = next(sub for sub in parent.sub_agents if sub.name == tool.agent.name)
    return SessionAgentTool(
        child,
        tool.skip_summarization,
        include_plugins=tool.include_plugins,
        propagate_grounding_metadata=tool.propagate_grounding_metadata,
    )


def _walk(root: BaseNode) -> list[BaseAgent]:
    """The agents of the tree, those inside its workflows too (agents.adk.nodes)."""
    return list(walk_agents(root))
