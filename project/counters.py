"""Totals kept by adding: `INSERT ... ON CONFLICT DO UPDATE SET n = n + excluded.n`.

A table of counters has one row per key (an hour, a user, an agent, ...): `Counters`
adds to it in one statement, which inserts the key's row the first time and adds to
it every time after. SQLite (3.24+) and PostgreSQL both take that statement, and
both make it atomic: on PostgreSQL two transactions adding to one row at once wait
for each other's row lock, and both additions stand; SQLite takes one writer at a
time. Django's `bulk_create(update_conflicts=True)` cannot add (it sets
`excluded`'s value), hence this.

A caller adds in the transaction of the write it counts, so the totals and the
rows they count commit (or roll back) together:

- `add(rows)`: values given by field name; rows of one key merged first (PostgreSQL
  refuses a statement that would touch one row twice);
- `add_query(queryset)`: the rows of a queryset's `values_list(*key, *sums,
  *maxima)`, an `INSERT ... SELECT` (the queryset must filter: SQLite reads an
  `ON` after a SELECT without a WHERE as a join's).

`maxima` are kept as the largest value added (`MAX(a, b)` on SQLite, `GREATEST`
on PostgreSQL); every other counted column is summed.
"""

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, models
from django.db.models import QuerySet

from project.patches.rows import preparer

GREATEST = {"sqlite": "MAX", "postgresql": "GREATEST"}


class Counters:
    """Adds to `model`'s rows, one per `key`: `sums` added, `maxima` kept largest."""

    def __init__(
        self,
        model: type[models.Model],
        *,
        key: Sequence[str],
        sums: Sequence[str],
        maxima: Sequence[str] = (),
    ) -> None:
        self.model = model
        self.key, self.sums, self.maxima = list(key), list(sums), list(maxima)
        self.names = [*self.key, *self.sums, *self.maxima]
        self.fields = [model._meta.get_field(name) for name in self.names]
        self.preparers = [preparer(field) for field in self.fields]

    def add(self, rows: Sequence[Mapping[str, Any]], *, using: str = DEFAULT_DB_ALIAS):
        """Add each row's sums (and maxima) to its key's totals, in one statement."""
        merged = self._merge(rows)
        if not merged:
            return
        db = connections[using]
        params = [
            prepare(value, db)
            for row in merged
            for prepare, value in zip(self.preparers, row, strict=True)
        ]
        with db.cursor() as cursor:
            cursor.execute(self._values_statement(db.vendor, len(merged)), params)

    def add_query(self, queryset: QuerySet) -> None:
        """Add the rows of `queryset`, a values_list of key, sums and maxima in
        that order (aggregated by key, if it may repeat one), in one statement."""
        query = queryset.order_by().query
        sql, params = query.get_compiler(using=queryset.db).as_sql()
        db = connections[queryset.db]
        with db.cursor() as cursor:
            statement = self._select_statement(db.vendor).format(select=sql)
            cursor.execute(statement, params)

    def _merge(self, rows: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
        by_key: dict[tuple, list[Any]] = {}
        width = len(self.key)
        for row in rows:
            values = [row[name] for name in self.names]
            kept = by_key.setdefault(tuple(values[:width]), values)
            if kept is values:
                continue
            for index, name in enumerate(self.names[width:], width):
                if name in self.maxima:
                    kept[index] = max(kept[index], values[index])
                else:
                    kept[index] += values[index]
        return list(by_key.values())

    @lru_cache(maxsize=32)  # noqa: B019 - a few Counters, each kept for the process
    def _values_statement(self, vendor: str, count: int) -> str:
        one = "(" + ", ".join(["%s"] * len(self.names)) + ")"
        values = ", ".join([one] * count)
        return f"{self._into()} VALUES {values} {self._on(vendor)}"

    @lru_cache(maxsize=4)  # noqa: B019 - as above
    def _select_statement(self, vendor: str) -> str:
        return f"{self._into()} {{select}} {self._on(vendor)}"

    def _into(self) -> str:
        columns = ", ".join(_quote(field.column) for field in self.fields)
        return f"INSERT INTO {_quote(self.model._meta.db_table)} ({columns})"

    def _on(self, vendor: str) -> str:
        table = _quote(self.model._meta.db_table)
        column = {
            name: _quote(field.column)
            for name, field in zip(self.names, self.fields, strict=True)
        }
        conflict = ", ".join(column[name] for name in self.key)
        sets = [
            f"{column[name]} = {table}.{column[name]} + excluded.{column[name]}"
            for name in self.sums
        ] + [
            f"{column[name]} = {GREATEST[vendor]}({table}.{column[name]},"
            f" excluded.{column[name]})"
            for name in self.maxima
        ]
        return f"ON CONFLICT ({conflict}) DO UPDATE SET {', '.join(sets)}"


def _quote(name: str) -> str:
    # SQLite and PostgreSQL quote names alike.
    return '"' + name.replace('"', '""') + '"'
