"""A grant saved while Redis is away: answered, decided by at once, rung once it is back.

Two web processes on PostgreSQL and a Redis of this module's own, which stops and
starts again (empty) mid-test. An administrator denies alice a toolset through one
process while Redis is away: before, the request failed (the access counters in
Redis could not be bumped, nor the doorbell rung) and nothing was saved. Now it
answers 201, alice's MCP session on the other process lists her tools without it
at once (the counters are in the database), and once Redis is back that session
joins its doorbell again and tells its client `tools/list_changed`.
"""

import asyncio
from contextlib import ExitStack

import httpx
import pytest
from mcp import types

from tests.integration import services
from tests.live.server import daphne
from tests.toolsets.gateway.conftest import mcp_client, tool_names

pytestmark = pytest.mark.integration

TOOL = "math.calculate"


@pytest.fixture(scope="module")
def redis():
    with services.redis_server() as server:
        yield server


@pytest.fixture(scope="module")
def webs(integration_env, redis, tmp_path_factory):
    """Two web processes, turns inline (no broker), on the module's own Redis."""
    logs = tmp_path_factory.mktemp("access-outage")
    env = {
        **integration_env,
        "REDIS_URL": redis.url,
        "CELERY_BROKER_URL": "",
        "TOOLCRIB_REDIS_PREFIX": services.run_name(),
    }
    with ExitStack() as stack:
        yield services.start_together(
            stack,
            daphne(env, logs / "daphne-a.log"),
            daphne(env, logs / "daphne-b.log"),
        )


async def test_a_grant_saved_while_redis_is_away_counts_at_once_and_rings_after(
    webs, redis
):
    web_a, web_b = webs
    admin = httpx.AsyncClient(
        base_url=web_a.url,
        headers={"Authorization": f"Token {web_a.token('admin', 'admin')}"},
    )
    changed = asyncio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with (
        admin,
        mcp_client(
            web_b.url, web_b.token("alice", "alice"), on_message=on_message
        ) as alice,
    ):
        before = await tool_names(alice)
        await asyncio.sleep(0.3)  # the client's GET stream opens

        await asyncio.to_thread(redis.stop)
        saved = await admin.post(
            "/api/grants/", json={"user": "alice", "toolset": "math", "effect": "deny"}
        )
        during = await tool_names(alice)
        missed = changed.is_set()
        await asyncio.to_thread(redis.start)
        await asyncio.wait_for(changed.wait(), timeout=20)
        after = await tool_names(alice)
        removed = await admin.delete(f"/api/grants/{saved.json()['id']}/")

    assert saved.status_code == 201, saved.text
    assert TOOL in before
    assert TOOL not in during
    assert not missed
    assert TOOL not in after
    assert removed.status_code == 204
