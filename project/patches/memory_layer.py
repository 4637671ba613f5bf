"""The in-memory channel layer of the embedded default: channels' own, its group
send done in one pass.

channels' `InMemoryChannelLayer.group_send` starts a task per member channel and
waits for them with `as_completed`, deep-copies the message for each, and walks
every channel's queue and every group's members for expired entries on each send
and each receive. A turn rings each event on three groups (its session's, its
agent's and the firehose), and that walk grows with every open socket. Here:

- `deliver(groups, message)` puts the message on every member channel of each
  group at once, with no task and no await. It must run on the loop that owns
  the queues (an asyncio.Queue is not thread-safe); `agents.doorbell.streams`
  hands it over from a turn's loop in one call. `group_send` is the same, one
  group, for every other caller.
- a message whose values are plain (text, numbers, None), as an event's doorbell
  is, is copied as a dict; any other deep-copied, as channels does, so no
  receiver can change what another receives.
- expired messages and memberships are swept at most every `SWEEP_EVERY` seconds
  (a tenth of the expiry when that is shorter), not on every call: a message is
  dropped at most that much after its expiry.

A full channel misses a group message, as in channels.

Written for channels 4.3 (its InMemoryChannelLayer's `channels`, `groups`,
`_clean_expired` and `expiry`). Off (`TOOLCRIB_PATCHES_OFF=memory_layer`):
settings name channels' own layer, and agents.doorbell.streams sends each group
with its `group_send`.
"""

import asyncio
import time
from collections.abc import Iterable
from copy import deepcopy
from typing import Any

from channels.layers import InMemoryChannelLayer as BaseInMemoryChannelLayer

WRITTEN_FOR = {"channels": "4.3"}

SWEEP_EVERY = 1.0  # seconds
PLAIN = (str, int, float, bool, type(None), bytes)


class InMemoryChannelLayer(BaseInMemoryChannelLayer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sweep_every = min(SWEEP_EVERY, self.expiry / 10)
        self._next_sweep = 0.0

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now < self._next_sweep:
            return
        self._next_sweep = now + self._sweep_every
        super()._clean_expired()

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        self.deliver([group], message)

    def deliver(self, groups: Iterable[str], message: dict[str, Any]) -> None:
        """Put `message` on every member channel of each group, now. On the loop
        that owns the layer's queues."""
        assert isinstance(message, dict), "message is not a dict"
        groups = list(groups)
        for group in groups:
            self.require_valid_group_name(group)
        self._clean_expired()
        plain = all(type(value) in PLAIN for value in message.values())
        expires = time.time() + self.expiry
        for group in groups:
            for channel in list(self.groups.get(group, ())):
                queue = self.channels.get(channel)
                if queue is None:
                    queue = self.channels[channel] = asyncio.Queue(
                        maxsize=self.get_capacity(channel)
                    )
                if queue.full():
                    continue
                queue.put_nowait(
                    (expires, dict(message) if plain else deepcopy(message))
                )
