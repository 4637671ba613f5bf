"""Querysets compiled once per database, run again with new parameters.

A hot path's query is built once, with `Param` where each call's values go:

    RUN = Prepared(
        Run.objects.select_related("session").filter(pk=Param("pk", Run._meta.pk))
    )
    run = RUN.first(pk=run_id)

The ORM compiles it to SQL on first use (per database alias) and keeps the SQL,
the select list and its converters; each call then substitutes its values
(prepared for their field, as a lookup would prepare them) and builds the rows as
the queryset would: model instances with their `select_related` objects.
`PreparedUpdate` does the same for an UPDATE of a queryset's rows, and gives the
count of rows changed. Building and compiling a queryset cost the
ORM ten to fifty times what SQLite spends running the query; a turn runs a few
dozen.

What is not supported is refused when the Prepared is made, never silently: a
queryset with prefetches, deferred loading or known related objects, values(), or
values_list() with `flat` or `named`. A call must give a value for each Param, and only those.

Safe under a worker's threads: compiling mutates a Query (its alias maps), so each
statement is compiled from a copy of the queryset's query, under the Prepared's own
lock, by one thread while the others wait for it; a compile that raises keeps
nothing, and the next call compiles again (tests/project/patches/test_prepared_threads.py).

Written for Django 5.2 (SQLCompiler's `as_sql`, `select`, `klass_info`,
`annotation_col_map`, `col_count`, `has_extra_select`, `get_converters`, and
`get_related_populators`). Off (`TOOLCRIB_PATCHES_OFF=prepared`): each call runs
the queryset (or its `update()`) through the ORM, compiled again, each Param
taking the call's value.
"""

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from django.db import connections, models
from django.db.models import Expression, QuerySet
from django.db.models.query import (
    ModelIterable,
    ValuesListIterable,
    get_related_populators,
)
from django.db.models.sql import UpdateQuery

from project import patches

WRITTEN_FOR = {"django": "5.2"}


class Param(Expression):
    """Where a call's value goes: named, and prepared for `field` at each call."""

    def __init__(self, name: str, field: models.Field) -> None:
        super().__init__(output_field=field)
        self.name = name
        self.prepare_for = field

    def as_sql(self, compiler, connection):
        bound = _bound.get()
        if bound is None:
            return "%s", [_Slot(self)]
        # The ORM's own path (TOOLCRIB_PATCHES_OFF=prepared): the call's value.
        if self.name not in bound.values:
            raise TypeError(f"no value for Param {self.name!r}")
        bound.used.add(self.name)
        value = bound.values[self.name]
        return "%s", [self.prepare_for.get_db_prep_value(value, connection)]

    def __repr__(self) -> str:
        return f"Param({self.name!r})"


@dataclass
class _Values:
    """A call's values, while the ORM compiles its query (the patch off)."""

    values: Mapping[str, Any]
    used: set[str] = field(default_factory=set)


_bound: ContextVar[_Values | None] = ContextVar("prepared_values", default=None)


@contextmanager
def _by_orm(values: Mapping[str, Any]) -> Iterator[None]:
    """Compile and run a query the ORM's own way, each Param taking its value from
    `values`; a value no Param took is refused, as the compiled path refuses it."""
    bound = _Values(values)
    token = _bound.set(bound)
    try:
        yield
    finally:
        _bound.reset(token)
    unknown = set(values) - bound.used
    if unknown:
        raise TypeError(f"values for no Param of the query: {sorted(unknown)}")


@dataclass(frozen=True, eq=False)
class _Slot:
    """A Param's place in the compiled parameters."""

    param: Param


@dataclass
class _Compiled:
    """A query's SQL and parameters (with `_Slot`s), and for a SELECT what building
    its rows needs: the compiler's select list and the populators of its
    select_related objects. None of it holds a connection: it serves every thread."""

    sql: str
    params: list[Any]
    select: Any = None
    klass_info: Any = None
    annotation_col_map: Any = None
    col_count: int = 0
    extra_columns: bool = False  # columns past col_count, for the order only
    populators: list[Any] | None = None
    # By column: the functions that turn its database value into Python's. The
    # backend's are bound to the compiling thread's connection object, and read
    # only settings from it (its time zone), never its database connection.
    converters: list[tuple[int, list[Any], Any]] | None = None


class Prepared:
    """A queryset (of model instances, or values_list() tuples) compiled once per
    database alias."""

    def __init__(self, queryset: QuerySet) -> None:
        if queryset._iterable_class not in (ModelIterable, ValuesListIterable):
            raise ValueError(
                "Prepared takes a queryset of model instances or values_list() tuples"
            )
        if queryset._prefetch_related_lookups or queryset._known_related_objects:
            raise ValueError("Prepared cannot prefetch or attach related objects")
        if queryset.query.deferred_loading != (frozenset(), True):
            raise ValueError("Prepared loads every field: no only() or defer()")
        self.queryset = queryset
        self._select: dict[str, _Compiled] = {}
        self._lock = threading.Lock()

    def fetch(self, **values: Any) -> list[Any]:
        """Every row, as the queryset would return them: model instances, or
        tuples for a values_list()."""
        if not patches.is_on("prepared"):
            with _by_orm(values):
                return list(self.queryset.all())
        alias = self.queryset.db
        compiled = self._select.get(alias) or _compiled_once(
            self._select,
            self._lock,
            alias,
            lambda: _compile_select(self.queryset, alias),
        )
        with connections[alias].cursor() as cursor:
            cursor.execute(compiled.sql, _params(alias, compiled, values))
            rows = cursor.fetchall()
        if compiled.extra_columns:  # as execute_sql leaves them out
            rows = [row[: compiled.col_count] for row in rows]
        rows = _converted(connections[alias], compiled.converters, rows)
        if self.queryset._iterable_class is ValuesListIterable:
            return [tuple(row) for row in rows]
        return list(_models(alias, compiled, rows))

    def first(self, **values: Any) -> Any:
        """The first row, or None (the queryset says the order)."""
        found = self.fetch(**values)
        return found[0] if found else None


class PreparedUpdate:
    """An UPDATE of a queryset's rows with `changes` (by field name: values,
    expressions or `Param`s), compiled once per database alias."""

    def __init__(self, queryset: QuerySet, changes: Mapping[str, Any]) -> None:
        self.queryset = queryset
        self.changes = dict(changes)
        self._compiled: dict[str, _Compiled] = {}
        self._lock = threading.Lock()

    def run(self, **values: Any) -> int:
        """The count of rows changed."""
        if not patches.is_on("prepared"):
            with _by_orm(values):
                return self.queryset.all().update(**self.changes)
        alias = self.queryset.db
        compiled = self._compiled.get(alias) or _compiled_once(
            self._compiled, self._lock, alias, lambda: self._compile(alias)
        )
        with connections[alias].cursor() as cursor:
            cursor.execute(compiled.sql, _params(alias, compiled, values))
            return cursor.rowcount

    def _compile(self, alias: str) -> _Compiled:
        query = self.queryset.query.chain(UpdateQuery)  # a copy
        query.add_update_values(self.changes)
        sql, params = query.get_compiler(using=alias).as_sql()
        return _Compiled(sql, list(params))


def _compiled_once(
    kept: dict[str, _Compiled],
    lock: threading.Lock,
    alias: str,
    compile_: Callable[[], _Compiled],
) -> _Compiled:
    """The statement kept for `alias`, compiled by the first thread to ask; the
    others wait for it. Kept only once compiled whole."""
    with lock:
        compiled = kept.get(alias)
        if compiled is None:
            compiled = kept[alias] = compile_()
        return compiled


def _compile_select(queryset: QuerySet, alias: str) -> _Compiled:
    # A copy: compiling changes the query (its aliases, joins, annotations).
    compiler = queryset.query.clone().get_compiler(using=alias)
    sql, params = compiler.as_sql()
    columns = [column[0] for column in compiler.select[: compiler.col_count]]
    if compiler.has_composite_fields(columns):
        raise ValueError("Prepared cannot read a composite primary key")
    converters = compiler.get_converters(columns)
    return _Compiled(
        sql,
        list(params),
        select=compiler.select,
        klass_info=compiler.klass_info,
        annotation_col_map=compiler.annotation_col_map,
        col_count=compiler.col_count,
        extra_columns=compiler.has_extra_select,
        populators=(
            get_related_populators(compiler.klass_info, compiler.select, alias)
            if compiler.klass_info
            else []
        ),
        converters=[(at, found, column) for at, (found, column) in converters.items()],
    )


def _params(alias: str, compiled: _Compiled, values: Mapping[str, Any]) -> list[Any]:
    """The compiled parameters with each Param's value, prepared for its field."""
    connection = connections[alias]
    params = []
    used = set()
    for param in compiled.params:
        if not isinstance(param, _Slot):
            params.append(param)
            continue
        name = param.param.name
        if name not in values:
            raise TypeError(f"no value for Param {name!r}")
        field = param.param.prepare_for
        params.append(field.get_db_prep_value(values[name], connection, prepared=False))
        used.add(name)
    unknown = set(values) - used
    if unknown:
        raise TypeError(f"values for no Param of the query: {sorted(unknown)}")
    return params


def _converted(connection, converters, rows: list[tuple]) -> list[Any]:
    """The rows with each value as Python's, as the compiler's apply_converters
    makes them: lists, or the rows themselves when no column needs converting."""
    if not converters:
        return rows
    done = []
    for row in rows:
        row = list(row)
        for at, functions, column in converters:
            value = row[at]
            for convert in functions:
                value = convert(value, column, connection)
            row[at] = value
        done.append(row)
    return done


def _models(alias: str, compiled: _Compiled, rows: list[Any]):
    """The rows as model instances, as ModelIterable builds them."""
    model_cls = compiled.klass_info["model"]
    select_fields = compiled.klass_info["select_fields"]
    start, end = select_fields[0], select_fields[-1] + 1
    init_list = [f[0].target.attname for f in compiled.select[start:end]]
    for row in rows:
        obj = model_cls.from_db(alias, init_list, row[start:end])
        for populator in compiled.populators:
            populator.populate(row, obj)
        for name, position in (compiled.annotation_col_map or {}).items():
            setattr(obj, name, row[position])
        yield obj
