"""Tools with execution policies, and scripted agents that call them.

Factories, registered by tests/toolsets/test_policies.py through settings.
"""

import asyncio
import threading

from google.adk.agents import LlmAgent
from google.adk.models import LlmRequest

from agents.adk.offline import OfflineLlm, OfflineStep
from toolsets.policies import Retryable, policy, retry, retryable

ALARMS: list[tuple] = []
FETCHES: list[str] = []
FAILURES_LEFT = {"count": 0}
RUNNING = {"now": 0, "peak": 0}
RELEASE = threading.Event()  # lets an abandoned sync tool finish at teardown
# The function responses each model call was given, newest last.
HEARD: list[list[dict]] = []


def set_alarm(hour: int, label: str) -> dict:
    """Set an alarm.

    Args:
        hour: The hour, 0 to 23.
        label: What the alarm is for.
    """
    ALARMS.append((hour, label))
    return {"status": "set", "hour": hour, "label": label}


@retry(3, backoff=0.01, backoff_max=0.05, on=(ConnectionError,))
def fetch_page(url: str) -> dict:
    """Fetch a page from a server that fails now and then.

    Args:
        url: The page.
    """
    FETCHES.append(url)
    if FAILURES_LEFT["count"] > 0:
        FAILURES_LEFT["count"] -= 1
        if url.endswith("/conn"):
            raise ConnectionError("connection reset")
        raise retryable(OSError("server busy"))
    if url.endswith("/broken"):
        raise ValueError("no such page")
    return {"status": "success", "url": url, "body": "hello"}


@retry(2, backoff=0.01)
async def reserve_seat(seat: str) -> dict:
    """Reserve a seat; the booking service is flaky.

    Args:
        seat: Which seat.
    """
    FETCHES.append(seat)
    if FAILURES_LEFT["count"] > 0:
        FAILURES_LEFT["count"] -= 1
        raise Retryable("booking service unavailable")
    return {"status": "reserved", "seat": seat}


@policy(timeout=0.3)
async def slow_search(query: str) -> dict:
    """Search, slowly.

    Args:
        query: What to look for.
    """
    await asyncio.sleep(30)
    return {"status": "success", "hits": []}


@policy(timeout=0.3)
def slow_report(name: str) -> dict:
    """Build a report on the tool thread, slowly.

    Args:
        name: Which report.
    """
    RELEASE.wait(10)
    return {"status": "success", "report": name}


@policy(max_concurrent=1, queue_wait=5)
async def render_video(clip: str) -> dict:
    """Render a clip; one render at a time.

    Args:
        clip: Which clip.
    """
    RUNNING["now"] += 1
    RUNNING["peak"] = max(RUNNING["peak"], RUNNING["now"])
    try:
        await asyncio.sleep(0.2)
    finally:
        RUNNING["now"] -= 1
    return {"status": "rendered", "clip": clip}


class HearingLlm(OfflineLlm):
    """An OfflineLlm that notes the tool results each request carries."""

    def answer(self, llm_request: LlmRequest):
        heard = [
            {"name": part.function_response.name, **part.function_response.response}
            for content in llm_request.contents
            for part in content.parts or []
            if part.function_response
        ]
        HEARD.append(heard)
        return super().answer(llm_request)


def _agent(name: str, script: list[OfflineStep], tools: list) -> LlmAgent:
    return LlmAgent(
        name=f"{name}_agent",
        description=f"Test agent {name}.",
        model=HearingLlm(script=script),
        tools=tools,
    )


def alarmist() -> LlmAgent:
    """Sets an alarm with bad arguments, then corrects itself."""
    script = [
        OfflineStep.call("set_alarm", hour="seven"),
        OfflineStep.call("set_alarm", hour=7, label="wake up"),
        OfflineStep.say("done"),
    ]
    return _agent("alarmist", script, [set_alarm])


def fetcher() -> LlmAgent:
    """Fetches the page its message names: `fetch <url>`."""
    script = [OfflineStep.call("fetch_page", url="https://example.test/a")]
    return _agent("fetcher", [*script, OfflineStep.say("done")], [fetch_page])


def breaker() -> LlmAgent:
    """Fetches a page that raises a non-retryable error."""
    script = [OfflineStep.call("fetch_page", url="https://example.test/broken")]
    return _agent("breaker", [*script, OfflineStep.say("done")], [fetch_page])


def resetter() -> LlmAgent:
    """Fetches a page whose connection resets (a retry_on type)."""
    script = [OfflineStep.call("fetch_page", url="https://example.test/conn")]
    return _agent("resetter", [*script, OfflineStep.say("done")], [fetch_page])


def booker() -> LlmAgent:
    """Reserves a seat through an async tool."""
    script = [OfflineStep.call("reserve_seat", seat="12A"), OfflineStep.say("done")]
    return _agent("booker", script, [reserve_seat])


def searcher() -> LlmAgent:
    """Calls an async tool that never answers in time."""
    script = [OfflineStep.call("slow_search", query="x"), OfflineStep.say("done")]
    return _agent("searcher", script, [slow_search])


def reporter() -> LlmAgent:
    """Calls a sync tool that never answers in time."""
    script = [OfflineStep.call("slow_report", name="q3"), OfflineStep.say("done")]
    return _agent("reporter", script, [slow_report])


def renderer() -> LlmAgent:
    """Renders three clips at once."""
    script = [
        OfflineStep.calls([("render_video", {"clip": c}) for c in ("a", "b", "c")]),
        OfflineStep.say("done"),
    ]
    return _agent("renderer", script, [render_video])
