"""The events' door for the apps above agents: a session's timeline recorded and
published (the event log), its wire shapes, one event inspected, and the doorbell
(agents.doorbell.streams: the channel groups and the publish that rings them).

Part of agents' public door (agents.runtime says which modules it is).
"""

from agents.doorbell import streams
from agents.events.inspector import inspect_event
from agents.events.log import arecord_and_publish
from agents.events.wire import (
    EventFrame,
    FunctionCallOut,
    FunctionResponseOut,
    WireEvent,
    is_error_response,
)

__all__ = [
    # The event log: a Toolcrib event stored under the session's next seq, rung.
    "arecord_and_publish",
    # The wire schema (docs/events.md).
    "EventFrame",
    "FunctionCallOut",
    "FunctionResponseOut",
    "WireEvent",
    "is_error_response",
    # The event inspector's runtime half.
    "inspect_event",
    # The doorbell: group names and publishing.
    "streams",
]
