"""toolsets.imports under a worker's threads: one toolset per registration, and per
stored import, however many turns ask for it first at once; the bound on kept MCP
imports holds.

An MCP toolset pools its sessions (a stdio server each): a second toolset for the
same import would open a second server, and nobody would close it.
tests/project/test_threads_postgresql.py runs this file on PostgreSQL too.
"""

import asyncio
from collections import OrderedDict

import pytest
from django.db import close_old_connections, connection

from tests.threads import at_once
from toolsets import imports
from toolsets.imports import McpServer, atoolset_for
from toolsets.imports import stored as stored_imports
from toolsets.imports.mcp import KeptMcpToolset
from toolsets.models import ToolImport

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db

ROUNDS = 20
COMMAND = ("/bin/true",)  # never started: nothing connects until tools are listed


def in_thread(call):
    """`call` on a worker thread, whose connection is closed as the thread ends."""

    def run(index: int):
        try:
            return call(index)
        finally:
            close_old_connections()
            connection.close()

    return run


def test_a_registration_asked_for_at_once_is_one_toolset(monkeypatch):
    registration = McpServer(name="adder", command=COMMAND)
    loops = [asyncio.new_event_loop() for _ in range(8)]  # one a thread, made ahead
    try:
        for _ in range(ROUNDS):
            monkeypatch.setattr(imports, "_toolsets", {})

            built = at_once(
                lambda i: loops[i].run_until_complete(atoolset_for(registration))
            )

            assert all(toolset is built[0] for toolset in built)
            assert loops[0].run_until_complete(atoolset_for(registration)) is built[0]
    finally:
        for loop in loops:
            loop.close()


@pytest.fixture
def fresh_process(monkeypatch):
    """No stored import's toolset built yet in this process."""
    monkeypatch.setattr(stored_imports, "_built", OrderedDict())
    monkeypatch.setattr(stored_imports, "_closings", {})


def stored_row(name: str) -> ToolImport:
    return ToolImport.objects.create(
        name=name,
        kind=ToolImport.Kind.MCP,
        registration=stored_imports.stored_registration(
            McpServer(name=name, command=COMMAND)
        ),
    )


@pytest.mark.django_db(transaction=True)
def test_turns_asking_for_a_stored_import_at_once_share_its_one_toolset(
    fresh_process,
):
    row = stored_row("adder")

    built = at_once(
        in_thread(
            lambda i: stored_imports.toolset_of(ToolImport.objects.get(pk=row.pk))
        )
    )

    assert isinstance(built[0], KeptMcpToolset)
    assert all(toolset is built[0] for toolset in built)
    assert list(stored_imports._built) == ["adder"]


@pytest.mark.django_db(transaction=True)
def test_stored_imports_asked_for_at_once_are_kept_within_the_bound(
    fresh_process, settings
):
    settings.TOOLCRIB_MCP_SESSIONS_MAX = 3
    rows = [stored_row(f"import{n}") for n in range(8)]

    built = at_once(
        in_thread(
            lambda i: stored_imports.toolset_of(ToolImport.objects.get(pk=rows[i].pk))
        )
    )

    assert [toolset.tool_name_prefix for toolset in built] == [row.name for row in rows]
    assert len(stored_imports._built) == 3
    assert all(
        built[int(name[6:])] is ts for name, (_, ts) in stored_imports._built.items()
    )
    assert sum(stored_imports._closings.values()) == 5
