"""A stored MCP import keeps its session across turns: its stdio server starts once.

The server is the `mcp` package's own (tests/toolsets/builtin/mcp_server.py),
started through `sh`, which appends its pid to a file first: one line per start.
Turns are real (the REST API's ?wait=1, the offline model picks the tool).
"""

import os
import shlex
import sys
from pathlib import Path

import pytest

from agents.models import AgentSpec
from tests.processes import has_exited, started
from toolsets.imports.stored import (
    forget_all,
    registration_of_row,
    stored_registration,
)
from toolsets.models import ToolImport

pytestmark = pytest.mark.django_db(transaction=True)

MCP_SERVER = Path(__file__).parent / "builtin" / "mcp_server.py"


@pytest.fixture(autouse=True)
def close_servers():
    yield
    forget_all()


@pytest.fixture
def tools_file(tmp_path):
    path = tmp_path / "tools.txt"
    path.write_text("add echo")
    return path


@pytest.fixture
def register(api_for, staff, tools_file, tmp_path):
    """Register an MCP import whose server logs each start; returns that log."""

    def add(name: str) -> Path:
        starts = tmp_path / f"{name}-starts.txt"
        starts.touch()
        server = shlex.join([sys.executable, str(MCP_SERVER), "stdio", str(tools_file)])
        script = f"echo $$ >> {shlex.quote(str(starts))}; exec {server}"
        response = api_for(staff).post(
            "/api/imports/",
            {
                "kind": "mcp",
                "name": name,
                "command": ["/bin/sh", "-c", script],
                "approve_tools": True,
            },
            format="json",
        )
        assert response.status_code == 201, response.content
        AgentSpec.objects.create(
            name=f"{name}-agent",
            model="offline/demo",
            instruction=f"To add two numbers, use {name}_add.",
            toolsets=[name],
        )
        return starts

    return add


@pytest.fixture
def add_numbers(alice, start_session, say, events_of):
    """One turn of alice in a new session of the import's agent; the tool's answer."""

    def turn(name: str, session: str | None = None) -> str:
        session = session or start_session(alice, f"{name}-agent")
        say(alice, session, "add a=2 b=3")
        responses = [
            r["response"]
            for f in events_of(alice, session)
            for r in f["event"].get("function_responses") or []
        ]
        return responses[-1]["content"][0]["text"]

    return turn


def test_three_turns_start_the_stdio_server_once(register, add_numbers, alice):
    starts = register("calc")
    at_registration = len(started(starts))  # registering lists the tools once

    answers = [add_numbers("calc") for _ in range(3)]

    assert answers == ["5", "5", "5"]
    assert len(started(starts)) == at_registration + 1
    assert not has_exited(started(starts)[-1], timeout=0)


def test_changing_the_import_restarts_its_server(register, add_numbers):
    starts = register("calc")
    add_numbers("calc")
    first = started(starts)[-1]

    row = ToolImport.objects.get(name="calc")
    changed = registration_of_row(row).model_copy(update={"env": {"MODE": "new"}})
    row.registration = stored_registration(changed)
    row.save()
    answer = add_numbers("calc")

    assert answer == "5"
    assert started(starts)[-1] != first
    assert has_exited(first)


def test_past_the_bound_the_least_recently_used_server_is_closed(
    register, add_numbers, settings
):
    settings.TOOLCRIB_MCP_SESSIONS_MAX = 1
    calc, other = register("calc"), register("other")
    add_numbers("calc")
    calc_server = started(calc)[-1]

    add_numbers("other")  # one more than the bound: calc's server is closed
    closed = has_exited(calc_server)
    add_numbers("calc")  # and starts again when calc is used again

    assert closed
    assert started(calc)[-1] != calc_server
    assert has_exited(started(other)[-1])
    assert os.path.exists(f"/proc/{started(calc)[-1]}")
