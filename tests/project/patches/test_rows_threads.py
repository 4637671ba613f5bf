"""project.patches.rows under a worker's threads: an Insert first used by many threads at
once (its statements built once per vendor and row count) stores every thread's
rows, and `create` writes every thread's instance.

An Insert is module-level (a turn's spans, governance's audit rows): its first
statements are built by whichever threads get there first.
tests/project/test_threads_postgresql.py runs this file on PostgreSQL too.
"""

import pytest
from django.contrib.auth.models import Group
from django.db import close_old_connections, connection

from agents.models import AgentSpec, Run, Session
from project.patches import rows
from project.patches.rows import Insert, create
from tests.threads import at_once

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 10


def in_thread(call):
    """`call` on a worker thread, whose connection is closed as the thread ends."""

    def run(index: int):
        try:
            return call(index)
        finally:
            close_old_connections()
            connection.close()

    return run


def test_threads_first_using_an_insert_at_once_each_store_their_rows():
    for round_ in range(ROUNDS):
        groups = Insert(Group, ["name"])

        def write(index: int, groups=groups, round_=round_) -> None:
            # 1, 2 or 3 rows: a statement of each size, and on PostgreSQL both
            # forms (one row's VALUES, several rows' JSON document).
            groups.rows([(f"r{round_} t{index} g{n}",) for n in range(index % 3 + 1)])

        at_once(in_thread(write))

        stored = set(Group.objects.filter(name__startswith=f"r{round_} "))
        assert {group.name for group in stored} == {
            f"r{round_} t{index} g{n}"
            for index in range(8)
            for n in range(index % 3 + 1)
        }


def test_threads_creating_at_once_each_write_their_instance(django_user_model):
    owner = django_user_model.objects.create_user("ada")
    agent = AgentSpec.objects.create(name="rows_agent", model="offline")
    session = Session.objects.create(
        app_name=agent.name, user_id=str(owner.pk), owner=owner, agent=agent
    )
    rows._all_fields.cache_clear()  # Run's INSERT not built yet

    made = at_once(
        in_thread(lambda i: create(Run(session=session, user=owner, text=f"turn {i}")))
    )

    assert sorted(Run.objects.values_list("text", flat=True)) == [
        f"turn {i}" for i in range(8)
    ]
    assert {run.pk for run in made} == set(Run.objects.values_list("pk", flat=True))
