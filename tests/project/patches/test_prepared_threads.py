"""project.patches.prepared under a worker's thread pool: a Prepared first used by many
threads at once compiles one correct statement, and keeps it.

A Celery worker with `--pool=threads` runs several turns in one process; each
module-level Prepared is compiled on its first use, by whichever threads get there
first. tests/project/test_threads_postgresql.py runs this file on PostgreSQL too.
"""

import pytest
from django.db import close_old_connections, connection
from django.db.models import Exists, OuterRef

from agents.models import AgentSpec, Run, Session
from project.patches.prepared import Param, Prepared, PreparedUpdate
from tests.threads import at_once

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 15


def fresh_run_query() -> Prepared:
    """A query with joins and a subquery: aliases the compiler must not share."""
    later = Run.objects.filter(
        session_id=OuterRef("session_id"), created_at__gt=OuterRef("created_at")
    )
    return Prepared(
        Run.objects.select_related("session__agent", "session__owner", "user")
        .filter(pk=Param("pk", Run._meta.pk))
        .annotate(has_later=Exists(later))
    )


def compiled_sql(prepared: Prepared) -> str:
    return prepared._select[connection.alias].sql


@pytest.fixture
def runs(django_user_model) -> list[Run]:
    owner = django_user_model.objects.create_user("ada")
    agent = AgentSpec.objects.create(name="threads_agent", model="offline")
    session = Session.objects.create(
        app_name=agent.name, user_id=str(owner.pk), owner=owner, agent=agent
    )
    return [
        Run.objects.create(session=session, user=owner, text=f"turn {n}")
        for n in range(8)
    ]


def in_thread(call):
    """`call` on a worker thread, whose connection is closed as the thread ends."""

    def run(index: int):
        try:
            return call(index)
        finally:
            close_old_connections()
            connection.close()

    return run


def test_threads_first_using_a_prepared_at_once_each_read_their_row(runs):
    reference = fresh_run_query()
    reference.fetch(pk=runs[0].pk)  # compiled alone, on this thread
    for _ in range(ROUNDS):
        prepared = fresh_run_query()

        found = at_once(in_thread(lambda i, p=prepared: p.first(pk=runs[i].pk)))

        assert [run.pk for run in found] == [run.pk for run in runs]
        assert [run.session.agent.name for run in found] == ["threads_agent"] * 8
        assert [run.has_later for run in found] == [True] * 7 + [False]
        # What it keeps is the statement compiled alone: nothing half-made.
        assert compiled_sql(prepared) == compiled_sql(reference)
        assert prepared.first(pk=runs[3].pk).pk == runs[3].pk


def test_the_queryset_a_prepared_was_made_from_is_left_as_it_was(runs):
    prepared = fresh_run_query()
    before = str(prepared.queryset.query)

    at_once(in_thread(lambda i: prepared.fetch(pk=runs[i].pk)))

    assert str(prepared.queryset.query) == before


def test_threads_first_running_an_update_at_once_each_change_their_row(runs):
    for round_ in range(ROUNDS):
        update = PreparedUpdate(
            Run.objects.filter(pk=Param("pk", Run._meta.pk)),
            {"text": Param("text", Run._meta.get_field("text"))},
        )

        def change(i: int, update=update, round_=round_) -> int:
            return update.run(pk=runs[i].pk, text=f"r{round_} {i}")

        changed = at_once(in_thread(change))

        assert changed == [1] * 8
        texts = dict(Run.objects.values_list("pk", "text"))
        assert [texts[run.pk] for run in runs] == [f"r{round_} {i}" for i in range(8)]


def test_a_failed_compile_is_not_kept(runs, monkeypatch):
    prepared = fresh_run_query()
    calls = {"n": 0}
    real = type(prepared.queryset.query).get_compiler

    def failing_once(query, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("compiler failed")
        return real(query, *args, **kwargs)

    monkeypatch.setattr(type(prepared.queryset.query), "get_compiler", failing_once)

    with pytest.raises(RuntimeError):
        prepared.first(pk=runs[0].pk)

    assert prepared.first(pk=runs[0].pk).pk == runs[0].pk
