"""ADK 2.x Workflow graphs, written as ADK's own workflow examples write them, for
tests/agents/test_workflows.py: each runs in Toolcrib and under ADK's own Runner.

- `triage`: routing (a node's route picks the next node), a fan-out to two nodes
  joined by a JoinNode, and a nested workflow.
- `flaky_pipeline`: a node that fails its first attempt, retried (RetryConfig).
- `greeter`: a node asking a person (RequestInput), resumed with the answer.
- `forecast_flow`: an LlmAgent node with a tool, and a tool node (a BaseTool put in
  the graph), each governed as any tool is.
- `planner`: an LlmAgent calling a workflow as a tool.
- `refunds`: a function node with `require_confirmation`: a person confirms first.
"""

from google.adk.agents import Context, LlmAgent
from google.adk.events import Event, RequestInput
from google.adk.tools import FunctionTool
from google.adk.workflow import JoinNode, RetryConfig, Workflow, node

from agents.adk.offline import OfflineLlm, OfflineStep


def classify(node_input) -> Event:
    """Routes a question about a bill to billing, anything else to support."""
    text = "".join(part.text or "" for part in node_input.parts)
    return Event(output=text, route="billing" if "bill" in text else "support")


def billing(node_input) -> str:
    return "billing team"


def support(node_input) -> str:
    return "support team"


def check_account(node_input) -> str:
    return "account ok"


def check_history(node_input) -> str:
    return "history ok"


def checks_done(node_input) -> str:
    return f"checks: {node_input['check_account']}, {node_input['check_history']}"


def summarize(node_input) -> str:
    return f"summary of {node_input}"


both_checks = JoinNode(name="both_checks")
report = Workflow(name="report", edges=[("START", summarize)])
triage = Workflow(
    name="triage",
    edges=[
        ("START", classify, {"billing": billing, "support": support}),
        (billing, (check_account, check_history), both_checks, checks_done, report),
        (support, report),
    ],
)

ATTEMPTS: list[int] = []


@node(retry_config=RetryConfig(max_attempts=3, initial_delay=0.01, max_delay=0.01))
def flaky_fetch(node_input) -> str:
    """Fails its first attempt of each run, as a flaky service would."""
    ATTEMPTS.append(1)
    if len(ATTEMPTS) % 2 == 1:
        raise ConnectionError("the service did not answer")
    return "fetched"


def publish(node_input) -> str:
    return f"published {node_input}"


flaky_pipeline = Workflow(
    name="flaky_pipeline", edges=[("START", flaky_fetch, publish)]
)


@node
async def ask_name(ctx: Context, node_input):
    yield RequestInput(message="What is your name?")


def welcome(node_input) -> str:
    return f"Welcome, {node_input}!"


greeter = Workflow(name="greeter", edges=[("START", ask_name, welcome)])


def lookup_weather(city: str) -> dict:
    """Looks up the weather of a city.

    Args:
        city: The city.
    """
    return {"city": city, "weather": "sunny"}


def shout(text: str) -> dict:
    """Shouts a text."""
    return {"shout": text.upper()}


def to_shout(node_input) -> dict:
    return {"text": "forecast done"}


forecaster = LlmAgent(
    name="forecaster",
    model=OfflineLlm(
        script=[
            OfflineStep.call("lookup_weather", city="Paris"),
            OfflineStep.say("Sunny in Paris."),
        ]
    ),
    tools=[lookup_weather],
)
forecast_flow = Workflow(
    name="forecast_flow",
    edges=[("START", forecaster, to_shout, FunctionTool(shout))],
)


def as_text(node_input) -> dict:
    return {"text": f"{node_input['city']} is {node_input['weather']}"}


# A workflow an agent calls as a tool (ADK wraps it in a NodeTool): the agent's
# call runs every node, and its output is the tool's result.
weather_check = Workflow(
    name="weather_check",
    description="Checks the weather of a city.",
    edges=[("START", FunctionTool(lookup_weather), as_text, FunctionTool(shout))],
)
planner = LlmAgent(
    name="planner",
    model=OfflineLlm(
        script=[
            OfflineStep.call("weather_check", city="Oslo"),
            OfflineStep.say("Done."),
        ]
    ),
    tools=[weather_check],
)


REFUNDS: list[str] = []


@node(require_confirmation=True)
def refund(node_input) -> str:
    """Refunds the order; a person confirms first (ADK asks with RequestInput)."""
    REFUNDS.append("refund")
    return "refunded"


refunds = Workflow(name="refunds", edges=[("START", refund)])


@node(retry_config=RetryConfig(max_attempts=2, initial_delay=0.01, max_delay=0.01))
def always_down(node_input) -> str:
    """Fails every attempt: ADK gives up after its last."""
    raise ConnectionError("the service is down")


broken_pipeline = Workflow(
    name="broken_pipeline", edges=[("START", always_down, publish)]
)
