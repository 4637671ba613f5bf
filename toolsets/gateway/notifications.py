"""`notifications/tools/list_changed` for every open MCP session whose tools change.

Access changes are announced once, on the channel layer, to the user's group and,
for a change for everyone, to everyone's (toolsets.access.notify): the very
doorbell the web app's sockets hear. Each MCP session of a user joins those two
groups with a channel of its own, from its first request, and tells its client
on every ring; it leaves them when the session ends. The client then lists its
tools again, and sees the change.

A 2026-07-28 client has no session and no standing GET stream: it asks with a
`subscriptions/listen` request (SEP-2575), whose response is the stream. That
request joins the same two groups for as long as it is open (alisten_tools).
"""

import asyncio
import contextlib
from typing import Any

from channels.layers import get_channel_layer
from mcp import types
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import (
    SUBSCRIPTION_ID_META_KEY,
    ToolsListChanged,
    event_to_notification,
)

from agents.realtime import streams

WATCH_KEY = "toolcrib.tools_watch"


async def awatch_tools(*, connection: Any, user_id: int) -> None:
    """Tell this MCP connection whenever the user's tools change (once per connection).

    `connection` is the SDK's per-session Connection: its `state` holds the watch
    and its `exit_stack` ends it with the session.
    """
    if WATCH_KEY in connection.state:
        return
    layer = get_channel_layer()
    if layer is None:
        return
    connection.state[WATCH_KEY] = True
    streams.bind_home_loop(asyncio.get_running_loop())
    channel = await layer.new_channel()
    groups = [streams.user_group(user_id), streams.everyone_group()]
    for group in groups:
        await layer.group_add(group, channel)
    task = asyncio.create_task(_forward(layer, channel, connection))

    async def stop() -> None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        for group in groups:
            await layer.group_discard(group, channel)

    connection.exit_stack.push_async_callback(stop)


async def _forward(layer: Any, channel: str, connection: Any) -> None:
    while True:
        message = await layer.receive(channel)
        if message.get("type") == streams.ACCESS_MESSAGE:
            # Best effort, never raises: the SDK drops it if the stream is gone.
            await connection.send_tool_list_changed()


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
