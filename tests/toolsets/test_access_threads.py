"""toolsets.access under a worker's threads: each turn's decisions are those of the
catalog it read, however many turns of one user decide at once, and whichever
versions they read.

A governed model step reads the version counters once and decides by them
(`asnapshot`); turns of one user running at once may hold readings a change
apart. tests/project/test_threads_postgresql.py runs this file on PostgreSQL too.
"""

import pytest
from django.db import close_old_connections, connection

from tests.threads import at_once
from toolsets import access, grants
from toolsets.models import Tool, Toolset

pytestmark = pytest.mark.django_db(transaction=True)

CALLS = 2000  # decisions each thread asks for


def in_thread(call):
    """`call` on a worker thread, whose connection is closed as the thread ends."""

    def run(index: int):
        try:
            return call(index)
        finally:
            close_old_connections()
            connection.close()

    return run


@pytest.fixture
def tools(make_user) -> dict:
    user = make_user("ada")
    toolset = Toolset.objects.create(name="ts", default_policy=Toolset.Policy.OPEN)
    names = [f"ts.t{n}" for n in range(4)]
    for name in names:
        Tool.objects.create(toolset=toolset, name=name[3:], full_name=name)
    return {"user": user, "names": names}


def snapshots_a_change_apart(names: list[str]) -> tuple[access.Snapshot, ...]:
    """The catalog before and after the tools were disabled, under one grants
    version: as a reading between the two bumps of a change would see them."""
    before = access.versions()
    tools_before = access._load_catalog(before).tools
    for tool in Tool.objects.filter(full_name__in=names):
        grants.update_tool(tool=tool, enabled=False)
    after = access.Versions(access.versions().catalog, before.grants)
    tools_after = access._load_catalog(after).tools
    return access.Snapshot(before, tools_before), access.Snapshot(after, tools_after)


def test_turns_of_one_user_deciding_at_once_each_get_their_own_catalogs_answers(
    tools,
):
    user_id, names = tools["user"].pk, tools["names"]
    enabled, disabled = snapshots_a_change_apart(names)
    access.explain_many(user_id=user_id, tools=names, snapshot=enabled)  # warm

    def decide(index: int) -> list[str]:
        snapshot = enabled if index % 2 else disabled
        wrong = []
        for _ in range(CALLS):
            found = access.explain_many(user_id=user_id, tools=names, snapshot=snapshot)
            wrong += [
                f"{name} allowed={decision.allowed} under catalog "
                f"{snapshot.versions.catalog}"
                for name, decision in found.items()
                if decision.allowed is not (snapshot is enabled)
            ]
        return wrong

    wrong = at_once(in_thread(decide))

    assert [found for found in wrong if found] == []


def test_users_deciding_for_the_first_time_at_once_each_get_their_own_grants(
    tools, make_user
):
    users = [make_user(f"user{n}") for n in range(8)]
    tool = Tool.objects.get(full_name=tools["names"][0])
    for user in users[::2]:
        grants.grant_tool(target=tool, effect="deny", user=user)

    decided = at_once(
        in_thread(lambda i: access.explain(user_id=users[i].pk, tool=tool.full_name))
    )

    assert [decision.allowed for decision in decided] == [False, True] * 4


def test_a_change_in_one_thread_is_never_undone_by_another(tools):
    """This process's own counters, bumped by threads at once, never go back to a
    value a thread read before its change: no decision cached before a change is
    kept as current after it."""
    user_id, names = tools["user"].pk, tools["names"]

    def change_and_decide(index: int) -> tuple[access.Versions, access.Versions]:
        before = access.versions()
        access.invalidate_grants()
        access.explain_many(user_id=user_id, tools=names)
        return before, access.versions()

    seen = at_once(in_thread(change_and_decide))

    assert [before.grants == after.grants for before, after in seen] == [False] * len(
        seen
    )
    assert access.versions().grants not in {before.grants for before, _ in seen}
