"""`notifications/tools/list_changed` for every open MCP session whose tools change.

Access changes are announced once, on the channel layer, to the user's group and,
for a change for everyone, to everyone's (toolsets.grants.notify): the very
doorbell the web app's sockets hear. Each MCP session of a user joins those two
groups with a channel of its own, from its first request, and tells its client
on every ring; it leaves them when the session ends. The client then lists its
tools again, and sees the change. A session that lost the layer (Redis away, its
groups gone with it) joins them again once Redis is back and tells its client
once then, as a ring may have been missed; what the client lists is decided from
the database, doorbell or not.

A 2026-07-28 client has no session and no standing GET stream: it asks with a
`subscriptions/listen` request (SEP-2575), whose response is the stream. That
request joins the same two groups for as long as it is open (alisten_tools).
"""

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from channels.layers import get_channel_layer
from mcp import types
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import (
    SUBSCRIPTION_ID_META_KEY,
    ToolsListChanged,
    event_to_notification,
)

from agents.timeline import streams

logger = logging.getLogger(__name__)

WATCH_KEY = "toolcrib.tools_watch"
# Seconds between two tries to join the access groups again, doubling up to MAX.
REJOIN_FIRST = 0.5
REJOIN_MAX = 5.0


async def awatch_tools(*, connection: Any, user_id: int) -> None:
    """Tell this MCP connection whenever the user's tools change (once per connection).

    `connection` is the SDK's per-session Connection: its `state` holds the watch
    and its `exit_stack` ends it with the session. With the channel layer away
    (Redis restarting), the request still answers; the watch joins once the layer
    is back, and tells the connection once for what may have changed meanwhile.
    """
    if WATCH_KEY in connection.state:
        return
    layer = get_channel_layer()
    if layer is None:
        return
    connection.state[WATCH_KEY] = True
    streams.bind_home_loop(asyncio.get_running_loop())
    groups = [streams.user_group(user_id), streams.everyone_group()]
    watch = _Watch(layer, groups, connection)
    with contextlib.suppress(*streams.PUBLISH_ERRORS):  # logged by _forward's retry
        watch.channel = await _joined(layer, groups)
    task = asyncio.create_task(_forward(watch))

    async def stop() -> None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await watch.leave()

    connection.exit_stack.push_async_callback(stop)


@dataclass
class _Watch:
    """One MCP session's ear on its user's access groups."""

    layer: Any
    groups: list[str]
    connection: Any
    channel: str | None = None

    async def leave(self) -> None:
        channel, self.channel = self.channel, None
        if channel is None:
            return
        for group in self.groups:
            with contextlib.suppress(*streams.PUBLISH_ERRORS):
                await self.layer.group_discard(group, channel)


async def _joined(layer: Any, groups: Sequence[str]) -> str:
    channel = await layer.new_channel()
    for group in groups:
        await layer.group_add(group, channel)
    return channel


async def _forward(watch: _Watch) -> None:
    """Tell the connection on each ring; with the layer lost (its memberships gone
    with Redis), join again once it is back, and tell it once then."""
    pause = REJOIN_FIRST
    while True:
        try:
            if watch.channel is None:  # its first join, or the layer's, failed
                watch.channel = await _joined(watch.layer, watch.groups)
                pause = REJOIN_FIRST
                await watch.connection.send_tool_list_changed()
            message = await watch.layer.receive(watch.channel)
        except streams.PUBLISH_ERRORS:
            logger.warning("tools watch lost its channel layer", exc_info=True)
            await watch.leave()
            await asyncio.sleep(pause)
            pause = min(pause * 2, REJOIN_MAX)
            continue
        if message.get("type") == streams.ACCESS_MESSAGE:
            # Best effort, never raises: the SDK drops it if the stream is gone.
            await watch.connection.send_tool_list_changed()


async def alisten_tools(
    *, ctx: Any, params: types.SubscriptionsListenRequestParams, user_id: int
) -> types.SubscriptionsListenResult:
    """Serve one `subscriptions/listen` stream: `notifications/tools/list_changed`
    on it whenever the user's tools change, until the client closes it.

    The SDK's ListenHandler, with the channel layer for its bus: the groups are
    joined before the acknowledgement, so no change after it is missed; only
    `toolsListChanged` is honoured (the gateway serves no prompts or resources).
    """
    if ctx.request_id is None:
        raise MCPError(types.INVALID_REQUEST, "subscriptions/listen needs a request id")
    layer = get_channel_layer()
    if layer is None:
        raise MCPError(types.INTERNAL_ERROR, "No channel layer: nothing to listen to.")
    wanted = bool(params.notifications.tools_list_changed)
    meta = {SUBSCRIPTION_ID_META_KEY: ctx.request_id}
    streams.bind_home_loop(asyncio.get_running_loop())
    channel = await layer.new_channel()
    groups = [streams.user_group(user_id), streams.everyone_group()]
    for group in groups:
        await layer.group_add(group, channel)
    try:
        honored = types.SubscriptionFilter(tools_list_changed=True if wanted else None)
        await ctx.session.send_notification(
            types.SubscriptionsAcknowledgedNotification(
                params=types.SubscriptionsAcknowledgedNotificationParams(
                    notifications=honored, _meta=meta
                )
            ),
            related_request_id=ctx.request_id,
        )
        while True:
            message = await layer.receive(channel)
            if wanted and message.get("type") == streams.ACCESS_MESSAGE:
                await ctx.session.send_notification(
                    event_to_notification(ToolsListChanged(), meta),
                    related_request_id=ctx.request_id,
                )
    finally:
        for group in groups:
            await layer.group_discard(group, channel)
