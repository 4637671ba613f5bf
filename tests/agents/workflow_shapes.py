"""More ADK 2.x Workflow shapes, as ADK's workflow docstrings and samples write
them, for tests/agents/test_workflow_shapes.py (each also run by `adk api_server`).

- `llm_router`: an LlmAgent node's answer picks the next node (its output routed
  by a function node), ADK's "agent as a classifier" pattern.
- `counter`: state passed between nodes (`Event(state=...)`, parameters bound from
  `ctx.state`), a loop (a node routing back to itself), and an async generator
  node yielding a message before its output.
- `fan_out`: a parallel worker node running once per item of a list.
- `drafts`: a human-in-the-loop loop: a review node asks a person under one fixed
  interrupt id; a rejection sends the draft back to be written again and asked
  again, an approval ends it.
"""

import asyncio
import threading
from collections.abc import AsyncGenerator

from fastapi.openapi.models import APIKey, APIKeyIn
from google.adk.agents import Context, LlmAgent
from google.adk.auth.auth_credential import AuthCredential, AuthCredentialTypes
from google.adk.auth.auth_tool import AuthConfig
from google.adk.events import Event, RequestInput
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.tools import FunctionTool
from google.adk.tools.agent_tool import AgentTool
from google.adk.workflow import Workflow, node
from google.genai import types

from agents.adk.offline import OfflineLlm, OfflineStep


def _text(node_input) -> str:
    parts = getattr(node_input, "parts", None)
    if parts is None:
        return str(node_input)
    return "".join(part.text or "" for part in parts)


class OneWordLlm(BaseLlm):
    """A model that classifies: "refund" when the user asks for money back."""

    model: str = "one-word"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        asked = " ".join(
            part.text or ""
            for content in llm_request.contents
            if content.role == "user"
            for part in content.parts or []
        )
        word = "refund" if "money back" in asked else "question"
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=word)])
        )


classifier = LlmAgent(
    name="classifier",
    instruction="Answer with one word: refund or question.",
    model=OneWordLlm(),
)


def route_answer(node_input) -> Event:
    """Routes on the classifier's one word."""
    word = _text(node_input).strip().lower()
    return Event(output=word, route=word)


def refund_desk(node_input) -> str:
    return "refund desk"


def help_desk(node_input) -> str:
    return "help desk"


llm_router = Workflow(
    name="llm_router",
    edges=[
        ("START", classifier, route_answer),
        (route_answer, {"refund": refund_desk, "question": help_desk}),
    ],
)


def start_count(node_input) -> Event:
    return Event(output=0, state={"count": 0, "topic": _text(node_input)})


def count_up(count: int) -> Event:
    """Counts to three in the session's state, looping back to itself."""
    count += 1
    return Event(
        output=count, state={"count": count}, route="again" if count < 3 else "done"
    )


async def tell_count(ctx: Context, node_input, topic: str):
    """An async generator node: a message first, then its output."""
    yield Event(
        content=types.Content(
            role="model", parts=[types.Part(text=f"Counting {topic}.")]
        )
    )
    yield f"{topic}: counted to {ctx.state['count']}"


counter = Workflow(
    name="counter",
    edges=[
        ("START", start_count, count_up),
        (count_up, {"again": count_up, "done": tell_count}),
    ],
)


def items(node_input) -> list[str]:
    return _text(node_input).split()


@node(parallel_worker=True)
def shout_item(node_input: str) -> str:
    return node_input.upper()


def gather(node_input) -> str:
    return " ".join(node_input)


fan_out = Workflow(name="fan_out", edges=[("START", items, shout_item, gather)])


def write_draft(node_input, drafts: int = 0) -> Event:
    drafts += 1
    return Event(output=f"draft {drafts}", state={"drafts": drafts})


@node(rerun_on_resume=True)
async def review(ctx: Context, node_input):
    """Asks a person to approve the draft; one interrupt id for every round."""
    answer = ctx.resume_inputs.get("review_draft")
    if answer is None:
        yield RequestInput(
            interrupt_id="review_draft", message=f"Approve {node_input}?"
        )
        return
    approved = isinstance(answer, dict) and answer.get("approved") is True
    yield Event(output=node_input, route="approved" if approved else "rejected")


def publish_draft(node_input) -> str:
    return f"published {node_input}"


drafts = Workflow(
    name="drafts",
    edges=[
        ("START", write_draft, review),
        (review, {"rejected": write_draft, "approved": publish_draft}),
    ],
)


def city_of(node_input) -> dict:
    return {"city": _text(node_input).split()[-1].capitalize()}


def lookup_forecast(city: str) -> dict:
    """Looks up the forecast of a city.

    Args:
        city: The city.
    """
    return {"city": city, "forecast": "rain"}


def say_forecast(node_input) -> str:
    return f"{node_input['city']}: {node_input['forecast']}"


# A workflow an agent calls through ADK's AgentTool (not put in `tools` as is).
forecast_check = Workflow(
    name="forecast_check",
    description="Checks the forecast of a city.",
    edges=[("START", city_of, FunctionTool(lookup_forecast), say_forecast)],
)
concierge = LlmAgent(
    name="concierge",
    model=OfflineLlm(
        script=[
            OfflineStep.call("forecast_check", request="forecast for bergen"),
            OfflineStep.say("Done."),
        ]
    ),
    tools=[AgentTool(agent=forecast_check)],
)


@node(rerun_on_resume=True)
async def fetch_both(ctx: Context, node_input) -> str:
    """Runs a tool and a function as dynamic nodes (`ctx.run_node`), in turn."""
    forecast = await ctx.run_node(FunctionTool(lookup_forecast), {"city": "Lima"})
    said = await ctx.run_node(say_forecast, forecast)
    return f"dynamic {said}"


dynamic = Workflow(name="dynamic", edges=[("START", fetch_both)])


@node(timeout=0.2)
async def slow_node(node_input) -> str:
    """Takes longer than its timeout: ADK stops it with NodeTimeoutError."""
    await asyncio.sleep(5)
    return "too late"


slow = Workflow(name="slow", edges=[("START", slow_node, publish_draft)])


def vault_api() -> AuthConfig:
    """What the vault node asks a person for: an API key in a header."""
    return AuthConfig(
        auth_scheme=APIKey(**{"in": APIKeyIn.header, "name": "X-Vault-Key"}),
        raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY),
        credential_key="vault_api_key",
    )


@node(auth_config=vault_api(), rerun_on_resume=True)
def open_vault(ctx: Context, node_input) -> str:
    """A node that needs a person's credential before it runs."""
    credential = ctx.get_auth_response(vault_api())
    key = credential.api_key if credential else ""
    return f"vault opened with ****{key[-4:]}"


vault = Workflow(name="vault", edges=[("START", open_vault)])


NAPPING = threading.Event()
WOKE: list[str] = []


async def nap(node_input) -> str:
    """A long node: a person stops the turn while it runs."""
    NAPPING.set()
    await asyncio.sleep(30)
    WOKE.append("nap")
    return "rested"


def after_nap(node_input) -> str:
    WOKE.append("after_nap")
    return f"after {node_input}"


# Two branches: one naps, the other is quick; a cancel stops the whole graph.
sleepy = Workflow(name="sleepy", edges=[("START", (nap, help_desk)), (nap, after_nap)])


@node
async def how_many(ctx: Context, node_input):
    """Asks a person for a number: the question's schema is an integer."""
    yield RequestInput(
        interrupt_id="how_many", message="How many?", response_schema=int
    )


def doubled(node_input: int) -> int:
    return node_input * 2


counting = Workflow(name="counting", edges=[("START", how_many, doubled)])
