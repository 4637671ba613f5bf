"""`notifications/tools/list_changed` for every open MCP session whose tools change.

Access changes are announced once, on the channel layer, to the user's group and,
for a change for everyone, to everyone's (toolsets.access.notify): the very
doorbell the web app's sockets hear. Each MCP session of a user joins those two
groups with a channel of its own, from its first request, and tells its client
on every ring; it leaves them when the session ends. The client then lists its
tools again, and sees the change.
"""

import asyncio
import contextlib
from typing import Any

from channels.layers import get_channel_layer

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
