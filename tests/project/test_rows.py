"""project.rows.Insert: rows written as the ORM would store them, all or none."""

import pytest
from django.contrib.auth.models import Group
from django.db import IntegrityError, connection
from django.test.utils import CaptureQueriesContext

from project.rows import Insert

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
