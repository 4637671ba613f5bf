"""project.metrics under a worker's threads: every turn and tool call recorded at
once is counted, each label's series made once (prometheus_client's own locks)."""

import uuid

from prometheus_client import REGISTRY

from project import metrics
from tests.threads import at_once

CALLS = 500  # each thread's


def test_tool_calls_recorded_at_once_are_all_counted():
    tools = [f"threads.tool_{uuid.uuid4().hex[:8]}" for _ in range(2)]

    def record(index: int) -> None:
        for n in range(CALLS):
            metrics.observe_tool_call(
                tool=tools[n % 2], outcome="denied", seconds=0.001
            )

    at_once(record)

    for tool in tools:
        labels = {"tool": tool, "outcome": "denied"}
        assert REGISTRY.get_sample_value("toolcrib_tool_calls_total", labels) == (
            8 * CALLS / 2
        )
        assert REGISTRY.get_sample_value(
            "toolcrib_tool_denials_total", {"tool": tool}
        ) == (8 * CALLS / 2)


def test_sockets_opened_and_closed_at_once_leave_the_gauge_where_it_was():
    kind = f"threads_{uuid.uuid4().hex[:8]}"

    def open_and_close(index: int) -> None:
        for _ in range(CALLS):
            metrics.socket_opened(kind=kind)
            metrics.socket_closed(kind=kind)

    at_once(open_and_close)

    assert REGISTRY.get_sample_value("toolcrib_open_sockets", {"kind": kind}) == 0
