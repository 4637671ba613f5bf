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
