"""project.patches.rows.Insert: rows written as the ORM would store them, all or none;
project.patches.rows.create: a new instance written as save() would write it."""

import math
import uuid
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection
from django.test.utils import CaptureQueriesContext

from agents.models import Run, RunSpan, Session
from project.patches.rows import Insert, create, preparer
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

GROUPS = Insert(Group, ["name"])


def test_rows_are_stored_as_given_in_one_statement():
    names = [f"team {index}" for index in range(40)]

    with CaptureQueriesContext(connection) as queries:
        GROUPS.rows([(name,) for name in names])

    assert len(queries) == 1
    assert sorted(Group.objects.values_list("name", flat=True)) == sorted(names)


def test_more_rows_than_one_batch_are_all_stored():
    size = connection.ops.bulk_batch_size(GROUPS.fields, [None] * 2000)
    names = [f"team {index}" for index in range(size * 2 + 3)]

    GROUPS.rows([(name,) for name in names])

    assert Group.objects.count() == len(names)


def test_a_refused_row_in_a_later_batch_leaves_none_stored():
    size = connection.ops.bulk_batch_size(GROUPS.fields, [None] * 2000)
    names = [f"team {index}" for index in range(size + 5)]
    names.append(names[0])  # unique: refused, in the last batch

    with pytest.raises(IntegrityError):
        GROUPS.rows([(name,) for name in names])

    assert not Group.objects.exists()


def test_no_rows_cost_no_query():
    with CaptureQueriesContext(connection) as queries:
        GROUPS.rows([])

    assert len(queries) == 0


def test_a_field_given_by_an_expression_takes_the_value_unprepared():
    shouting = Insert(Group, ["name"], expressions={"name": "UPPER(%s)"})

    shouting.rows([("ops",), ("support",)])

    assert sorted(Group.objects.values_list("name", flat=True)) == ["OPS", "SUPPORT"]


def test_an_expression_for_a_field_not_inserted_is_refused():
    with pytest.raises(ValueError, match="not inserted"):
        Insert(Group, ["name"], expressions={"id": "%s"})


VALUES = [
    None,
    "text",
    "",
    Run.Status.RUNNING,
    0,
    7,
    True,
    2.5,
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    datetime(2026, 11, 25, 9, 30, tzinfo=UTC),
    datetime(2026, 11, 25, 23, 59, 59, 999999, tzinfo=timezone(timedelta(hours=5.5))),
    datetime(2026, 3, 29, 1, 30, tzinfo=ZoneInfo("Europe/Berlin")),
    {"a": [1, 2]},
    [1, "two"],
]


@pytest.mark.parametrize(
    "field",
    [
        *[field for field in Run._meta.concrete_fields],
        *[field for field in ToolCall._meta.concrete_fields],
        *[field for field in RunSpan._meta.concrete_fields],
    ],
    ids=lambda field: f"{field.model.__name__}.{field.name}",
)
def test_a_value_is_prepared_as_the_orm_prepares_it(field):
    prepare = preparer(field)
    for value in VALUES:
        try:
            expected = field.get_db_prep_save(value, connection)
        except (TypeError, ValueError, ValidationError):
            continue  # not a value of this field: the ORM refuses it too
        assert comparable(prepare(value, connection)) == comparable(expected), value


def comparable(prepared):
    """PostgreSQL's JSON values are psycopg Jsonb wrappers, equal only to themselves."""
    return ("jsonb", prepared.obj) if type(prepared).__name__ == "Jsonb" else prepared


def test_a_row_given_by_name_takes_the_fields_in_order():
    spans = Insert(RunSpan, ["name", "kind", "duration_ms"])

    assert spans.values_of(
        {"duration_ms": 1.5, "name": "call", "kind": "tool", "unused": 1}
    ) == ("call", "tool", 1.5)
    with pytest.raises(KeyError, match="kind"):
        spans.values_of({"name": "call", "duration_ms": 1.5})


def test_rows_of_every_kind_of_value_read_back_as_given(run_for_spans):
    """Many rows at once (PostgreSQL: an array a column) read back as the ORM would
    have stored them: text with quotes, commas, braces and backslashes, NULLs,
    a column of NULLs only, JSON of every shape, times and floats."""
    spans = Insert(
        RunSpan,
        ["run", "span_id", "parent_id", "name", "start", "duration_ms", "attributes"]
        + ["kind", "status"],
    )
    when = datetime(2026, 11, 29, 4, 30, 15, 123456, tzinfo=UTC)
    given = [
        ("a" * 16, "", 'say "hi", {x}', when, 0.0, {"k": 'v "q" \\ \u00e9'}),
        ("b", "a" * 16, "NULL", when, 2.5, [1, "two", None]),
        ("c", "", "", when, 1e-6, {}),
        ("d", "", "back\\slash", when, 123456.789, {"nested": {"a": [True, 1.5]}}),
    ]

    spans.rows([(run_for_spans.pk, *row, "tool", "ok") for row in given])

    stored = RunSpan.objects.filter(run=run_for_spans).order_by("span_id")
    assert [
        (s.span_id, s.parent_id, s.name, s.start, s.duration_ms, s.attributes)
        for s in stored
    ] == given


def test_floats_beyond_json_read_back_as_given(run_for_spans):
    """The infinities and (PostgreSQL) NaN, which JSON cannot carry (PostgreSQL
    takes many rows as one JSON document), are stored as the ORM stores them."""
    spans = Insert(
        RunSpan,
        ["run", "span_id", "parent_id", "name", "start", "duration_ms", "attributes"]
        + ["kind", "status"],
    )
    when = datetime(2026, 11, 29, tzinfo=UTC)
    given = {"b": float("inf"), "c": float("-inf"), "d": 0.1}
    if connection.vendor == "postgresql":  # SQLite stores NaN as NULL
        given["a"] = float("nan")

    spans.rows(
        [
            (run_for_spans.pk, key, "", "s", when, value, {}, "tool", "ok")
            for key, value in given.items()
        ]
    )

    stored = dict(
        RunSpan.objects.filter(run=run_for_spans).values_list("span_id", "duration_ms")
    )
    if given.pop("a", None):
        assert math.isnan(stored.pop("a"))
    assert stored == given


def test_many_rows_are_one_statement_whatever_their_count(run_for_spans):
    """However many rows, the statement's text is the same on PostgreSQL: its
    parameters do not grow with the rows (psycopg keeps a query of at most 50
    converted; a turn's 27 spans were 243)."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's statement takes a row's values each")
    spans = Insert(
        RunSpan,
        ["run", "span_id", "parent_id", "name", "start", "duration_ms", "attributes"]
        + ["kind", "status"],
    )
    when = datetime(2026, 11, 29, tzinfo=UTC)
    statements = []
    for count in (3, 30):
        with CaptureQueriesContext(connection) as queries:
            spans.rows(
                [
                    (
                        run_for_spans.pk,
                        f"{count}-{n}",
                        "",
                        "s",
                        when,
                        1.0,
                        {},
                        "tool",
                        "ok",
                    )
                    for n in range(count)
                ]
            )
        statements.append(queries[-1]["sql"].split(" SELECT")[0])
        assert len(queries) == 1

    assert RunSpan.objects.filter(run=run_for_spans).count() == 33
    assert statements[0] == statements[1]


def test_a_created_instance_reads_back_as_the_orms_own(
    alice, demo_agents, start_session
):
    """Every field as Run.objects.create would store it: defaults (a list, zeros,
    the queued status), JSON, a foreign key, auto_now_add set on the instance."""
    session = Session.objects.get(pk=start_session(alice, "weather_sentiment"))
    choice = {"mode": "any", "tools": ["get_weather"]}
    before = datetime.now(UTC)

    with CaptureQueriesContext(connection) as queries:
        made = create(Run(session=session, user=alice, text="hi", tool_choice=choice))
    by_orm = Run.objects.create(
        session=session, user=alice, text="hi", tool_choice=choice
    )

    assert len(queries) == 1
    assert made.created_at >= before and not made._state.adding
    fields = [
        f.attname
        for f in Run._meta.concrete_fields
        if f.name not in ("id", "created_at")
    ]
    stored, expected = (
        Run.objects.values(*fields).get(pk=pk) for pk in (made.pk, by_orm.pk)
    )
    assert stored == expected
    assert stored["tool_choice"] == choice and stored["handoffs"] == []
    assert Run.objects.get(pk=made.pk).created_at == made.created_at


def test_create_needs_the_primary_key_set():
    with pytest.raises(ValueError, match="primary key"):
        create(Group(name="team"))
    assert not Group.objects.exists()


def test_a_statement_run_again_is_prepared_with_its_parameters_bound_apart():
    """On PostgreSQL (settings: server-side binding, prepare threshold 2) a
    statement a turn repeats is parsed and planned once on its connection."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no prepared statements to read")
    for index in range(3):
        GROUPS.rows([(f"team {index}",)])

    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [statement for (statement,) in cursor.fetchall()]

    assert [s for s in prepared if 'INTO "auth_group"' in s and "$1" in s], prepared
    assert Group.objects.count() == 3


@pytest.fixture
def run_for_spans(alice, demo_agents, start_session):
    session = Session.objects.get(pk=start_session(alice, "weather_sentiment"))
    return Run.objects.create(session=session, user=alice, text="hi")
