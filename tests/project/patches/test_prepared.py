"""project.patches.prepared: a queryset compiled once returns what the queryset returns."""

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.db.models import Exists, OuterRef, Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import AgentSpec, Run, Session
from project.patches.prepared import Param, Prepared, PreparedUpdate

pytestmark = pytest.mark.django_db(transaction=True)

RUN = Prepared(
    Run.objects.select_related("session__agent", "session__owner", "user").filter(
        pk=Param("pk", Run._meta.pk)
    )
)


def fields_of(obj) -> dict:
    return {k: v for k, v in vars(obj).items() if k != "_state"}


@pytest.fixture
def runs(django_user_model) -> list[Run]:
    owner = django_user_model.objects.create_user("ada")
    agent = AgentSpec.objects.create(name="prepared_agent", model="offline")
    session = Session.objects.create(
        app_name=agent.name, user_id=str(owner.pk), owner=owner, agent=agent
    )
    return [
        Run.objects.create(
            session=session, user=owner, text=f"turn {n}", handoffs=[{"to": n}]
        )
        for n in range(3)
    ]


def test_a_row_reads_as_the_queryset_reads_it_with_its_related_rows(runs):
    for run in runs:
        found = RUN.first(pk=run.pk)
        expected = Run.objects.select_related(
            "session__agent", "session__owner", "user"
        ).get(pk=run.pk)

        assert fields_of(found) == fields_of(expected)
        assert fields_of(found.session) == fields_of(expected.session)
        assert fields_of(found.session.agent) == fields_of(expected.session.agent)
        assert found.session.owner.username == "ada"
        assert found.user.username == "ada"


def test_related_rows_come_with_it_at_no_further_query(runs):
    RUN.first(pk=runs[0].pk)  # compiled

    with CaptureQueriesContext(connection) as queries:
        run = RUN.first(pk=runs[1].pk)
        names = (run.session.agent.name, run.user.username)

    assert names == ("prepared_agent", "ada")
    assert len(queries) == 1


def test_a_value_given_as_text_is_prepared_for_its_field(runs):
    assert RUN.first(pk=str(runs[2].pk)).text == "turn 2"


def test_no_row_is_none():
    assert RUN.first(pk=uuid.uuid4()) is None


def test_order_and_several_params_are_kept(runs):
    newest_first = Prepared(
        Run.objects.filter(
            session_id=Param("session", Run._meta.get_field("session")),
            created_at__gte=Param("since", Run._meta.get_field("created_at")),
        ).order_by("-created_at", "-id")
    )

    found = newest_first.fetch(
        session=runs[0].session_id, since=timezone.now() - timedelta(hours=1)
    )

    assert [run.text for run in found] == ["turn 2", "turn 1", "turn 0"]
    assert newest_first.fetch(session=runs[0].session_id, since=timezone.now()) == []


def test_values_list_rows_read_as_the_queryset_reads_them(runs):
    newest = Run.objects.filter(
        session_id=Param("session", Run._meta.get_field("session"))
    ).order_by("-created_at", "-id")
    columns = ("id", "text", "created_at", "handoffs")
    window = Prepared(newest.values_list(*columns)[:2])

    found = window.fetch(session=runs[0].session_id)

    expected = list(
        Run.objects.filter(session_id=runs[0].session_id)
        .order_by("-created_at", "-id")
        .values_list(*columns)[:2]
    )
    assert found == expected
    assert [row[1] for row in found] == ["turn 2", "turn 1"]
    assert found[0][3] == [{"to": 2}]


def test_an_update_changes_the_rows_its_params_pick(runs):
    earlier = Run.objects.filter(
        session_id=OuterRef("session_id"),
        status=Run.Status.QUEUED,
        created_at__lt=OuterRef("created_at"),
    )
    claim_first = PreparedUpdate(
        Run.objects.filter(
            pk=Param("pk", Run._meta.pk), status=Run.Status.QUEUED
        ).filter(~Exists(earlier)),
        {"status": Param("status", Run._meta.get_field("status"))},
    )

    assert claim_first.run(pk=runs[1].pk, status="running") == 0
    assert claim_first.run(pk=runs[0].pk, status="running") == 1
    assert list(
        Run.objects.order_by("created_at").values_list("status", flat=True)
    ) == [
        "running",
        "queued",
        "queued",
    ]


def test_an_update_keeps_the_changes_it_was_made_with(runs):
    first = Run.objects.filter(pk=Param("pk", Run._meta.pk))
    cancel = PreparedUpdate(first, {"status": Run.Status.CANCELLED})
    fail = PreparedUpdate(first, {"status": Run.Status.FAILED})

    cancel.run(pk=runs[0].pk)
    fail.run(pk=runs[1].pk)

    assert list(
        Run.objects.order_by("created_at").values_list("status", flat=True)
    ) == [
        "cancelled",
        "failed",
        "queued",
    ]


def test_a_call_must_give_each_param_and_only_those(runs):
    with pytest.raises(TypeError, match="no value for Param 'pk'"):
        RUN.first()
    with pytest.raises(TypeError, match="for no Param"):
        RUN.first(pk=runs[0].pk, user=1)


@pytest.mark.parametrize(
    "queryset",
    [
        Group.objects.values("name"),
        Group.objects.values_list("name", flat=True),
        Group.objects.values_list("name", named=True),
        Group.objects.prefetch_related("permissions"),
        Group.objects.only("name"),
    ],
)
def test_what_it_cannot_build_is_refused_when_made(queryset):
    with pytest.raises(ValueError):
        Prepared(queryset)


def test_either_side_of_an_or_takes_its_param():
    User.objects.create_user("ada")
    User.objects.create_user("bob")
    either = Prepared(
        User.objects.filter(
            Q(username=Param("one", User._meta.get_field("username")))
            | Q(username=Param("other", User._meta.get_field("username")))
        ).order_by("username")
    )

    assert [u.username for u in either.fetch(one="bob", other="ada")] == ["ada", "bob"]
    assert [u.username for u in either.fetch(one="bob", other="eve")] == ["bob"]
