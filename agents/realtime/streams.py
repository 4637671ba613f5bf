"""Channel-group names (one function per kind of group) and publishing.

apublish_frame() is the one doorbell for a frame, with the Redis error guard;
agents.events.log.record_and_publish() stores an event and rings it.

The database is the log; the channel layer is only a doorbell. Publish after the
event is committed, with its seq, so a client that misses a frame replays it.
"""

import asyncio
import hashlib
import logging
from typing import Any

from channels.layers import InMemoryChannelLayer, get_channel_layer
from redis.exceptions import RedisError

from agents.models import Session

logger = logging.getLogger(__name__)

# What a doorbell raises when Redis is away; the event is stored all the same.
PUBLISH_ERRORS = (RedisError, OSError)
EVENT_MESSAGE = "event.new"
ACCESS_MESSAGE = "access.changed"
INBOX_MESSAGE = "inbox.changed"


def session_group(session_id: str) -> str:
    """Every subscriber of one session."""
    return f"session.{session_id}"


def agent_group(agent_name: str) -> str:
    """Every subscriber following one agent."""
    return f"agent.{agent_name}"


def firehose_group() -> str:
    """Staff watching every session."""
    return "firehose"


def user_group(user_id: int) -> str:
    """Every socket of one user: access changes reach them here."""
    return f"user.{user_id}"


def everyone_group() -> str:
    """Every user's sockets: a change for everyone is one send here."""
    return "users"


def inbox_user_group(user_id: int) -> str:
    """One user's inbox sockets: her own requests, and those only she answers."""
    return f"inbox.user.{user_id}"


def inbox_group_group(group_name: str) -> str:
    """The inbox sockets of one Django group's members.

    A group's name may hold any character and run to 150; a channel group's name
    only [A-Za-z0-9-_.], under 100: so a digest of the name."""
    digest = hashlib.sha256(group_name.encode("utf-8", "surrogatepass")).hexdigest()
    return f"inbox.group.{digest[:40]}"


def inbox_staff_group() -> str:
    """Staff's inbox sockets: staff may answer every call and approval."""
    return "inbox.staff"


_home_loop: asyncio.AbstractEventLoop | None = None


def bind_home_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Record the loop the consumers of this process run on.

    The in-memory layer's queues belong to that loop; a turn running on another
    loop (the inline executor's thread) must hand its sends over to it.
    """
    global _home_loop
    _home_loop = loop


async def asend_to_groups(groups: list[str], message: dict[str, Any]) -> None:
    """group_send to each group, on the loop that owns the layer's queues."""
    layer = get_channel_layer()
    if layer is None:
        return

    async def send_all() -> None:
        for group in groups:
            await layer.group_send(group, message)

    home = _home_loop
    current = asyncio.get_running_loop()
    if (
        isinstance(layer, InMemoryChannelLayer)
        and home
        and home is not current
        and home.is_running()
    ):
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(send_all(), home))
        return
    await send_all()


async def apublish(
    *, session_id: str, agent_name: str, owner_id: int | None, frame: dict[str, Any]
) -> None:
    """Ring the doorbell for one event frame on every group that may want it."""
    message = {
        "type": EVENT_MESSAGE,
        "frame": frame,
        "agent": agent_name,
        "owner": owner_id,
    }
    groups = [session_group(session_id), agent_group(agent_name), firehose_group()]
    await asend_to_groups(groups, message)


async def apublish_frame(session: Session, frame: dict[str, Any]) -> None:
    """Ring the doorbell for one rendered frame of `session`.

    A doorbell that fails (Redis restarting) is logged, not raised: the event is
    stored, and clients replay it by seq; it must not fail what recorded it."""
    try:
        await apublish(
            session_id=session.id,
            agent_name=session.app_name,
            owner_id=session.owner_id,
            frame=frame,
        )
    except PUBLISH_ERRORS:
        seq = frame.get("seq")
        logger.warning(
            "publish failed session=%s seq=%s", session.id, seq, exc_info=True
        )


async def apublish_inbox(groups: list[str], frame: dict[str, Any]) -> None:
    """Ring the inbox doorbell: one send per group of who hears of a request.

    Logged, not raised, when it fails: the request is stored, and an inbox reads
    the database when it (re)connects."""
    try:
        await asend_to_groups(groups, {"type": INBOX_MESSAGE, "frame": frame})
    except PUBLISH_ERRORS:
        logger.warning("inbox publish failed frame=%s", frame, exc_info=True)
