"""Remote A2A agents as tools: a card read through the guarded client, and a toolset
of one `delegate_<name>` tool that sends the model's request to the agent.

A remote agent is an import like an MCP server (docs/a2a.md, "Using remote
agents"): its registration (`A2AAgent`: the card's URL, a token) is sealed on its
ToolImport row, its card is stored as the row's `document`, and its one tool is in
the catalog, so grants and their conditions decide who may delegate, an approval
gate may hold a delegation, and each delegation is a ToolCall row.

Where it may go: the card's URL and the endpoint the card names are both judged
by `remote_allowlist`: a public host, or one staff listed in
TOOLCRIB_A2A_REMOTE_PRIVATE_HOSTS; every request goes through toolsets.net's
guarded transport (checked and pinned addresses, no redirects, no proxies, a size
limit), so neither a card nor a DNS answer can point a delegation at the cloud's
metadata service or the team's private network.

A delegation: `message/send`, blocking, with the session's remote context (kept in
session state, `a2a:<name>`), polled with `tasks/get` while the task is still
working, all within the registration's timeout (TOOLCRIB_A2A_REMOTE_TIMEOUT by
default). The model reads the answer, or an error
in plain words (unreachable, credentials refused, the task failed, the agent needs
more input: then the next call continues that task); never an exception.
"""

import asyncio
import json
from dataclasses import dataclass
from typing import Any
from uuid import uuid4

import httpx
import pydantic
from a2a.client import ClientConfig, ClientFactory
from a2a.client.errors import (
    A2AClientError,
    A2AClientHTTPError,
    A2AClientJSONRPCError,
    A2AClientTimeoutError,
)
from a2a.types import (
    AgentCard,
    Message,
    Part,
    Role,
    Task,
    TaskQueryParams,
    TaskState,
    TextPart,
)
from django.conf import settings
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools import BaseTool, ToolContext
from google.adk.tools.base_toolset import BaseToolset
from google.genai import types

from toolsets.imports.registrations import A2AAgent, ImportFailed, remember
from toolsets.net import (
    Allowlist,
    HostRefused,
    Limits,
    check_url,
    fetch,
    guarded_client,
    ip_or_none,
    is_public,
)
from toolsets.refusals import Refusal

STATE_PREFIX = "a2a:"
ANSWER_CHARS = 20000
POLL_SECONDS = 0.5
UNSETTLED = frozenset({TaskState.submitted, TaskState.working, TaskState.unknown})


def remote_allowlist(*urls: str) -> Allowlist:
    """Where a remote agent's requests may go: each URL's host if it is a name or a
    public address, and the private hosts staff allowed (names resolving to a
    private address are judged by the transport, address by address)."""
    entries = list(settings.TOOLCRIB_A2A_REMOTE_PRIVATE_HOSTS)
    for url in urls:
        parsed = httpx.URL(url)
        literal = ip_or_none(parsed.raw_host.decode("ascii"))
        if literal is None or is_public(literal):
            entries.append(parsed.netloc.decode("ascii"))
    return Allowlist.parse(entries)


# The card.


async def aload_card(registration: A2AAgent) -> dict[str, Any]:
    """The agent card at the registration's URL, validated; ImportFailed if it
    cannot be fetched, is not JSON, is not a card, or names a forbidden endpoint."""
    timeout = float(settings.TOOLCRIB_IMPORT_TIMEOUT)
    limit = int(settings.TOOLCRIB_IMPORT_MAX_SPEC_BYTES)
    try:
        fetched = await fetch(
            method="GET",
            url=registration.url,
            allowlist=remote_allowlist(registration.url),
            limits=Limits(max_bytes=limit, timeout=timeout, max_redirects=0),
            headers={"Accept": "application/json"},
        )
    except HostRefused as exc:
        raise ImportFailed(f"the card's host is not allowed: {exc}{HINT}") from exc
    except (Refusal, ValueError) as exc:
        raise ImportFailed(f"the card could not be fetched: {exc}") from exc
    if fetched.status != 200:
        raise ImportFailed(f"the card's URL answered HTTP {fetched.status}")
    card = parse_card(fetched.body)
    await _check_endpoint(card)
    return card.model_dump(mode="json", by_alias=True, exclude_none=True)


HINT = (
    " (a host outside the public internet must be listed in "
    "TOOLCRIB_A2A_REMOTE_PRIVATE_HOSTS)"
)


def parse_card(body: bytes) -> AgentCard:
    """An A2A agent card from JSON; ImportFailed naming what is wrong."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ImportFailed("the card is not JSON") from exc
    if not isinstance(data, dict):
        raise ImportFailed("the card is not a JSON object")
    try:
        return AgentCard.model_validate(data)
    except pydantic.ValidationError as exc:
        wrong = sorted(
            {".".join(str(p) for p in e["loc"]) or "card" for e in exc.errors()}
        )
        raise ImportFailed(
            f"the card is not an A2A agent card: missing or invalid {', '.join(wrong)}"
        ) from exc


async def _check_endpoint(card: AgentCard) -> None:
    try:
        await check_url(httpx.URL(card.url), remote_allowlist(card.url))
    except (HostRefused, httpx.InvalidURL) as exc:
        raise ImportFailed(
            f"the endpoint the card names ({card.url}) is not allowed: {exc}{HINT}"
        ) from exc


def card_of(document: dict[str, Any]) -> AgentCard:
    """The card a row stored (aload_card's)."""
    return AgentCard.model_validate(document)


# The tool.


class RemoteAgentToolset(BaseToolset):
    """One remote agent's toolset: its `delegate_<name>` tool."""

    def __init__(self, registration: A2AAgent, card: AgentCard) -> None:
        super().__init__()
        self._tool = DelegateTool(registration, card)

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        """The delegation tool."""
        return [self._tool]

    async def close(self) -> None:
        """Nothing is kept open: each delegation has its own client."""


def a2a_toolset(document: dict[str, Any], registration: A2AAgent) -> BaseToolset:
    """The toolset of a registration, from the card a refresh stored."""
    try:
        card = card_of(document)
    except pydantic.ValidationError as exc:
        raise ImportFailed(f"the card of {registration.name} is not valid") from exc
    return remember(RemoteAgentToolset(registration, card), registration)


def describe_card(card: AgentCard) -> str:
    """The tool's description: the card's, its skills, and how to call it."""
    skills = "\n".join(
        f"- {skill.name}: {skill.description}".rstrip(": ") for skill in card.skills
    )
    return (
        f"Delegate a task to the remote agent {card.name} (over A2A). "
        f"{card.description}".strip()
        + (f"\nIts skills:\n{skills}" if skills else "")
        + "\nSend the whole request in words as `request`; its answer comes back as "
        "`answer`. Calls in this conversation continue one conversation with it."
    )


class DelegateTool(BaseTool):
    """Sends a request to a remote A2A agent and answers with its answer."""

    def __init__(self, registration: A2AAgent, card: AgentCard) -> None:
        super().__init__(
            name=f"delegate_{registration.name}",
            description=describe_card(card),
            custom_metadata={"risk": "write"},
        )
        self.registration = registration
        self.card = card

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema={
                "type": "object",
                "properties": {
                    "request": {
                        "type": "string",
                        "description": "What to ask the remote agent, in words.",
                    }
                },
                "required": ["request"],
            },
        )

    async def run_async(
        self, *, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any]:
        """Delegate; an answer, or an error the model reads."""
        request = str(args.get("request") or "").strip()
        if not request:
            return failed("give the request to send, in words")
        key = STATE_PREFIX + self.registration.name
        remembered = dict(tool_context.state.get(key) or {})
        timeout = self.registration.timeout or settings.TOOLCRIB_A2A_REMOTE_TIMEOUT
        who = f"the remote agent {self.registration.name}"
        try:
            async with asyncio.timeout(timeout):
                outcome = await self._delegate(request, remembered)
        except (TimeoutError, A2AClientTimeoutError):
            return failed(f"{who} gave no answer within {timeout:g} seconds")
        except HostRefused as exc:
            return failed(f"{who} may not be reached: {exc}")
        except A2AClientHTTPError as exc:
            return failed(http_failure(who, exc))
        except A2AClientJSONRPCError as exc:
            return failed(f"{who} refused the request: {exc.error.error.message}")
        except (A2AClientError, Refusal, httpx.HTTPError, ValueError) as exc:
            return failed(f"{who} could not be reached: {type(exc).__name__}: {exc}")
        tool_context.state[key] = outcome.remembered()
        return outcome.result(who, self.name)

    async def _delegate(self, request: str, remembered: dict[str, str]) -> "Outcome":
        message = Message(
            role=Role.user,
            message_id=uuid4().hex,
            parts=[Part(root=TextPart(text=request))],
            context_id=remembered.get("context_id") or None,
            task_id=remembered.get("task_id") or None,
        )
        http = guarded_client(
            remote_allowlist(self.registration.url, self.card.url),
            max_bytes=int(settings.TOOLCRIB_IMPORT_MAX_RESPONSE_BYTES),
            timeout=self.registration.timeout or settings.TOOLCRIB_A2A_REMOTE_TIMEOUT,
        )
        http.headers.update(self.registration.headers())
        async with http:
            client = ClientFactory(
                ClientConfig(httpx_client=http, streaming=False)
            ).create(self.card)
            last: Any = None
            async for event in client.send_message(message):
                last = event
            if isinstance(last, Message):
                return Outcome.of_message(last)
            if last is None:
                raise ValueError("the agent answered nothing")
            task: Task = last[0]
            while task.status.state in UNSETTLED:
                await asyncio.sleep(POLL_SECONDS)
                task = await client.get_task(TaskQueryParams(id=task.id))
            return Outcome.of_task(task)


def failed(message: str, **ids: str) -> dict[str, Any]:
    """An error the model reads (the audit row says `error`)."""
    return {**ids, "status": "error", "error_message": message}


def http_failure(who: str, exc: A2AClientHTTPError) -> str:
    if exc.status_code in (401, 403):
        return (
            f"{who} refused Toolcrib's credentials (HTTP {exc.status_code}): "
            "staff must give it a valid token"
        )
    if exc.status_code == 503:
        return f"{who} could not be reached: {exc.message}"
    return f"{who} answered HTTP {exc.status_code}: {exc.message}"


def texts(parts: list[Part] | None) -> str:
    return "\n".join(
        part.root.text for part in parts or [] if isinstance(part.root, TextPart)
    ).strip()


@dataclass(frozen=True)
class Outcome:
    """What a delegation ended with."""

    state: str
    answer: str
    task_id: str = ""
    context_id: str = ""

    @classmethod
    def of_message(cls, message: Message) -> "Outcome":
        return cls(
            TaskState.completed.value,
            texts(message.parts),
            message.task_id or "",
            message.context_id or "",
        )

    @classmethod
    def of_task(cls, task: Task) -> "Outcome":
        status = texts(task.status.message.parts) if task.status.message else ""
        made = "\n".join(texts(a.parts) for a in task.artifacts or []).strip()
        answer = made if task.status.state == TaskState.completed else status
        return cls(
            task.status.state.value, answer or made or status, task.id, task.context_id
        )

    def remembered(self) -> dict[str, str]:
        """Session state for the next delegation: the same remote conversation;
        the same task while it waits for input."""
        waiting = self.state in (TaskState.input_required, TaskState.auth_required)
        return {
            "context_id": self.context_id,
            "task_id": self.task_id if waiting else "",
        }

    def result(self, who: str, tool: str) -> dict[str, Any]:
        ids = {"remote_task_id": self.task_id, "remote_context_id": self.context_id}
        answer = self.answer[:ANSWER_CHARS]
        if self.state == TaskState.completed:
            return {**ids, "state": self.state, "answer": answer}
        if self.state == TaskState.input_required:
            return failed(
                f"{who} needs more before it can go on: {answer or '(no question)'}. "
                f"Ask the user, then call {tool} again with the answer: it continues "
                "the same task.",
                **ids,
            )
        if self.state == TaskState.auth_required:
            return failed(f"{who} asks for credentials Toolcrib cannot give", **ids)
        return failed(
            f"{who}'s task ended {self.state}: {answer or 'with no reason given'}",
            **ids,
        )
