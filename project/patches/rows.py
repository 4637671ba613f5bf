"""INSERT statements for rows a hot path writes many of, without the ORM's save.

`Insert(Model, fields)` writes rows given as plain values, one per field, in
`fields`' order: each value prepared as the ORM's INSERT prepares it
(`field.get_db_prep_save`), without a model instance and without the ORM's SQL
compiler, which cost more than the database's own work on a small row. The
statement's text is built once per connection vendor and row count.

A field may be given by an SQL expression instead (`expressions`, by field name):
its text has one `%s`, which takes the row's value for it as given, unprepared. An
audit row finds its tool by name that way, inside the INSERT.

On PostgreSQL, more than one row without expressions goes as one JSON document,
a list of objects keyed by column (`INSERT ... SELECT ... FROM
json_populate_recordset(NULL::table, %s)`): one parameter whatever the row count,
encoded by the json module in C, where an array a column went through psycopg's
list dumper in Python, value by value (a turn's 27 spans: 1.84 ms of CPU that
way, 0.95 ms this way, bench/README.md); PostgreSQL reads each value by its
column's type.

Nothing here runs `pre_save` (no `auto_now`), signals or validation: a caller
gives every value the row needs. `create(instance)` is the one exception: a new
model instance (its primary key set by a default, as a UUID is), every concrete
field written as `save(force_insert=True)` writes it, `auto_now_add` included, and
still no signals: for a model none are connected to (a Run).

Rows are written in batches the backend takes (`bulk_batch_size`); more than one
batch runs in one transaction, so a refused batch leaves none of the rows stored.

Written for Django 5.2 (what `get_db_prep_save` returns for each field type,
`bulk_batch_size`). Off (`TOOLCRIB_PATCHES_OFF=rows`): each batch goes through
the ORM's InsertQuery and SQL compiler (`raw`, as a fixture's load saves: the
values as given), an expression as RawSQL.
"""

import json
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime, time
from decimal import Decimal
from functools import cache, cached_property, lru_cache
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections, models, transaction
from django.db.models.expressions import RawSQL
from django.db.models.sql import InsertQuery

from project import patches

WRITTEN_FOR = {"django": "5.2"}

# Field types whose database value is the Python value itself when it has one of
# these types (or is None): what get_db_prep_save would hand back unchanged.
AS_IS: dict[str, tuple[type, ...]] = {
    "CharField": (str,),
    "TextField": (str,),
    "SlugField": (str,),
    "AutoField": (int,),
    "BigAutoField": (int,),
    "IntegerField": (int,),
    "BigIntegerField": (int,),
    "SmallIntegerField": (int,),
    "PositiveIntegerField": (int,),
    "PositiveBigIntegerField": (int,),
    "PositiveSmallIntegerField": (int,),
    "FloatField": (float,),
    "BooleanField": (bool,),
}


def preparer(field: models.Field) -> Callable[[Any, Any], Any]:
    """How to prepare a value of `field` for a connection, as `get_db_prep_save`
    does: a value the database takes as it is (AS_IS) is not passed through the
    field's methods, every other one is."""
    target = field.target_field if field.is_relation else field
    if target.get_internal_type() == "DateTimeField":
        return _datetime_preparer(field)
    kinds = AS_IS.get(target.get_internal_type(), ())

    text = kinds == (str,)  # a str subclass (a TextChoices member) is text too

    def prepare(value: Any, connection) -> Any:
        if kinds and (
            value is None or type(value) in kinds or (text and isinstance(value, str))
        ):
            return value
        return field.get_db_prep_save(value, connection)

    return prepare


def _datetime_preparer(field: models.Field) -> Callable[[Any, Any], Any]:
    """A DateTimeField's: an aware datetime (USE_TZ) as the backend's
    `adapt_datetimefield_value` takes it, without the field's methods in between
    (they hand it on unchanged): on SQLite the text of the naive time in the
    connection's zone, on PostgreSQL the datetime itself. Any other value, or
    another backend, through `get_db_prep_save`."""

    def prepare(value: Any, connection) -> Any:
        if type(value) is datetime and value.tzinfo is not None and settings.USE_TZ:
            vendor = connection.vendor
            if vendor == "sqlite":
                return str(value.astimezone(connection.timezone).replace(tzinfo=None))
            if vendor == "postgresql":
                return value
        return field.get_db_prep_save(value, connection)

    return prepare


class Insert:
    """The INSERT of `model`'s `fields` (names, in the order values are given)."""

    def __init__(
        self,
        model: type[models.Model],
        fields: Sequence[str],
        *,
        expressions: Mapping[str, str] | None = None,
    ) -> None:
        self.model = model
        self.names = list(fields)
        self.fields = [model._meta.get_field(name) for name in fields]
        expressions = expressions or {}
        unknown = set(expressions) - set(fields)
        if unknown:
            raise ValueError(f"expressions for fields not inserted: {sorted(unknown)}")
        # Per field, in order: its SQL expression, or None for a prepared value.
        self.expressions = [expressions.get(name) for name in fields]
        self.preparers = [
            None if expressions.get(name) else preparer(field)
            for name, field in zip(fields, self.fields, strict=True)
        ]

    def rows(self, rows: Sequence[Sequence[Any]]) -> None:
        """INSERT `rows`, each a sequence of values in `fields`' order."""
        if not rows:
            return
        size = max(1, connection.ops.bulk_batch_size(self.fields, rows))
        batches = [rows[start : start + size] for start in range(0, len(rows), size)]
        if len(batches) == 1:
            self._write(batches[0])
            return
        with transaction.atomic():
            for batch in batches:
                self._write(batch)

    def values_of(self, row: Mapping[str, Any]) -> tuple[Any, ...]:
        """A row given by field name, as the values rows() takes (a KeyError
        names a field it lacks; names it has beyond `fields` are left out)."""
        return tuple(row[name] for name in self.names)

    def _write(self, rows: Sequence[Sequence[Any]]) -> None:
        if not patches.is_on("rows"):
            self._write_by_orm(rows)
            return
        # The thread's own connection, looked up once: `connection` is a proxy
        # that finds it again on every attribute the fields' methods read.
        db = connections[DEFAULT_DB_ALIAS]
        prepared = [
            [
                value if prepare is None else prepare(value, db)
                for prepare, value in zip(self.preparers, row, strict=True)
            ]
            for row in rows
        ]
        vendor = db.vendor
        if vendor == "postgresql" and len(rows) > 1 and not any(self.expressions):
            # One JSON document of rows, one statement for any count.
            params: list[Any] = [self._document(prepared)]
            statement = self._statement(vendor, None)
        else:
            params = [value for row in prepared for value in row]
            statement = self._statement(vendor, len(rows))
        with db.cursor() as cursor:
            cursor.execute(statement, params)

    def _write_by_orm(self, rows: Sequence[Sequence[Any]]) -> None:
        """The rows through the ORM's own INSERT (TOOLCRIB_PATCHES_OFF=rows): model
        instances, its SQL compiler preparing each value, `raw` as a fixture's load
        saves (no pre_save: the values as given), an expression as RawSQL."""
        instances = []
        for row in rows:
            instance = self.model()
            for field, sql, value in zip(
                self.fields, self.expressions, row, strict=True
            ):
                setattr(
                    instance,
                    field.attname,
                    value if sql is None else RawSQL(sql, [value]),
                )
            instances.append(instance)
        query = InsertQuery(self.model)
        query.insert_values(self.fields, instances, raw=True)
        query.get_compiler(using=DEFAULT_DB_ALIAS).execute_sql()

    def _document(self, prepared: list[list[Any]]) -> str:
        """The rows as one JSON list of objects keyed by column name."""
        columns = [field.column for field in self.fields]
        for index in self._floats:
            for row in prepared:  # JSON has no NaN or infinity; PostgreSQL's text does
                value = row[index]
                if value is not None and not math.isfinite(value):
                    row[index] = str(value).replace("inf", "Infinity").lower()
        return json.dumps(
            [dict(zip(columns, row, strict=True)) for row in prepared],
            default=_json_value,
            ensure_ascii=False,
        )

    @cached_property
    def _floats(self) -> list[int]:
        return [
            index
            for index, field in enumerate(self.fields)
            if field.get_internal_type() == "FloatField"
        ]

    @lru_cache(maxsize=64)  # noqa: B019 - a few Inserts, each kept for the process
    def _statement(self, vendor: str, count: int | None) -> str:
        """The INSERT of `count` rows of values, or (None) of one JSON document."""
        quote = connection.ops.quote_name
        columns = ", ".join(quote(field.column) for field in self.fields)
        table = quote(self.model._meta.db_table)
        into = f"INSERT INTO {table} ({columns})"
        if count is None:
            return (
                f"{into} SELECT {columns}"
                f" FROM json_populate_recordset(NULL::{table}, %s::json)"
            )
        one = "(" + ", ".join(sql or "%s" for sql in self.expressions) + ")"
        return f"{into} VALUES {', '.join([one] * count)}"


def create(instance: models.Model) -> models.Model:
    """INSERT a new `instance` as `save(force_insert=True)` would, without the
    ORM's save machinery (its SQL compiler): every concrete field, each through
    its `pre_save(add=True)` (an `auto_now_add` field is set on the instance).

    The primary key must already be set (a default such as uuid4 sets it when the
    instance is made): nothing is read back. No signal is sent."""
    model = type(instance)
    if instance.pk is None:
        raise ValueError(f"{model.__name__}: create() needs the primary key set")
    insert, fields = _all_fields(model)
    insert.rows([[field.pre_save(instance, add=True) for field in fields]])
    instance._state.adding, instance._state.db = False, DEFAULT_DB_ALIAS
    return instance


@cache
def _all_fields(model: type[models.Model]) -> tuple[Insert, list[models.Field]]:
    fields = list(model._meta.concrete_fields)
    return Insert(model, [field.name for field in fields]), fields


def _json_value(value: Any) -> Any:
    """A prepared value the json module has no form for, as PostgreSQL reads it
    from JSON text for its column: times in ISO 8601, a UUID or a decimal as
    text, a JSON field's wrapped value as itself."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, uuid.UUID | Decimal):
        return str(value)
    wrapped = getattr(value, "obj", _MISSING)  # psycopg's Json / Jsonb
    if wrapped is not _MISSING:
        return wrapped
    raise TypeError(f"{type(value).__name__}: no JSON form for a row's value")


_MISSING = object()
