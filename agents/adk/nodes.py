"""Walking a tree of ADK nodes: agents, and ADK 2.x's Workflow graphs among them.

A root may be an agent (its sub-agents, and a Workflow an LlmAgent has as a tool)
or a Workflow (a `BaseNode`, not a `BaseAgent`: its graph's nodes, which may be
agents, function nodes, tool nodes or nested workflows). Everything that looks for
an agent or a tool in a tree (the builder's checks, the catalog, the inbox's
request rules, the models prepared for a turn) walks it here, so that a tool deep
inside a workflow is found as a sub-agent's is.

The children of a node are what ADK itself calls its static children (those that
run under the same Runner, session and plugins): `BaseNode._iter_static_children`.
"""

from collections.abc import Iterator
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.tools import BaseTool
from google.adk.workflow import BaseNode

# A node's path in a run, as ADK writes it on each event (`node_info.path`):
# names with run counters, `wf@1/review@2`.
PATH_SEPARATOR = "/"
RUN_SEPARATOR = "@"


def children(node: BaseNode) -> list[BaseNode]:
    """The nodes that run under `node` in the same invocation."""
    return list(node._iter_static_children())  # noqa: SLF001 - ADK's one walk


def walk(root: BaseNode) -> Iterator[BaseNode]:
    """`root` and every node under it, depth first, each once."""
    seen: set[int] = set()
    pending = [root]
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        pending.extend(reversed(children(node)))


def walk_agents(root: BaseNode) -> Iterator[BaseAgent]:
    """The agents of a tree, depth first, however deep in workflows."""
    return (node for node in walk(root) if isinstance(node, BaseAgent))


def find_node(root: BaseNode, name: str) -> BaseNode | None:
    """The first node of the tree called `name`."""
    return next((node for node in walk(root) if node.name == name), None)


def node_tools(node: Any) -> list[Any]:
    """What a node declares as its own tools: an agent's `tools`, a tool node's one
    tool (ADK wraps a BaseTool put in a graph into a node that runs it directly)."""
    tool = getattr(node, "tool", None)
    if isinstance(tool, BaseTool) and not isinstance(node, BaseAgent):
        return [tool]
    return list(getattr(node, "tools", None) or [])


def is_tool_node(node: Any) -> bool:
    """A graph node that runs one tool, with no model and no agent around it."""
    return isinstance(getattr(node, "tool", None), BaseTool) and not isinstance(
        node, BaseAgent
    )


def is_workflow(node: Any) -> bool:
    """A node that is no agent: a Workflow graph (or another ADK 2.x node)."""
    return isinstance(node, BaseNode) and not isinstance(node, BaseAgent)


def path_names(path: str | None) -> list[str]:
    """`wf@1/review@2` -> `["wf", "review"]`: a node path without run counters."""
    if not path:
        return []
    return [part.split(RUN_SEPARATOR, 1)[0] for part in path.split(PATH_SEPARATOR)]
