"""A Celery worker keeps an imported MCP server's session across turns, and closes
it cleanly when it stops.

The server is the `mcp` package's own (tests/toolsets/builtin/mcp_server.py), over
stdio, started through `sh`, which appends its pid to a file first: one line per
start, so the file counts the sessions the worker opened. The worker and the web
process are this module's own, so stopping the worker is part of the test.
"""

from contextlib import ExitStack

import pytest

from tests.integration import services
from tests.integration.clients import Client
from tests.live.mcp_imports import register, started_by
from tests.live.server import celery_worker, daphne, stop
from tests.processes import has_exited

pytestmark = pytest.mark.integration

IMPORT = "kept_calc"
AGENT = "kept_calc_agent"
NOT_CLEAN = "did not close cleanly"


@pytest.fixture(scope="module")
def processes(integration_env, tmp_path_factory):
    """One web process and one worker (threads pool) of this module's own, on a
    queue of their own: the session's cluster worker would otherwise take turns."""
    logs = tmp_path_factory.mktemp("mcp-sessions")
    env = {**integration_env, "TOOLCRIB_CELERY_QUEUE": services.run_name()}
    with ExitStack() as stack:
        worker, web = services.start_together(
            stack,
            celery_worker(env, logs / "worker.log", pool="threads", concurrency=2),
            daphne(env, logs / "daphne.log"),
        )
        yield web, worker


async def add_numbers(client: Client, session: str) -> str:
    run = await client.wait_for_run(await client.say(session, "add a=2 b=3"))
    assert run["status"] == "succeeded", run
    responses = [
        r["response"]
        for f in await client.events(session)
        for r in f["event"].get("function_responses") or []
    ]
    return responses[-1]["content"][0]["text"]


async def test_two_turns_on_a_worker_share_one_mcp_session(processes, tmp_path):
    web, worker = processes
    starts, tools = tmp_path / "starts.txt", tmp_path / "tools.txt"
    starts.touch()
    tools.write_text("add echo")
    register(web, name=IMPORT, agent=AGENT, starts=starts, tools=tools)
    client = Client.sign_in(web, "alice")

    answers = [
        await add_numbers(client, await client.create_session(AGENT)),
        await add_numbers(client, await client.create_session(AGENT)),
    ]

    assert answers == ["5", "5"]
    # The web process lists the import's tools (at registration, and again when
    # its catalog refreshes); the worker's two turns started one server.
    by_worker = started_by(starts, worker.process.pid)
    assert len(by_worker) == 1, started_by(starts, None)
    server = by_worker[0]
    assert not has_exited(server, timeout=0)

    stop(worker.process)  # a warm shutdown: SIGTERM

    assert worker.process.returncode == 0
    assert has_exited(server)
    assert NOT_CLEAN not in worker.output()
