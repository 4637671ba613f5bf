"""The Django admin's lists of tables that grow with use (sessions, events, runs,
requests, the audit): what opening one costs on a team's day 100.

Django's changelist counts the rows it pages (one COUNT), counts the whole table
again when a filter or search is on (`show_full_result_count`), reads each
`date_hierarchy` level as the DISTINCT dates of every row, and a field filter
without choices as the field's DISTINCT values; and it sorts by the model's
ordering. On a year of data each of those read every row: the events' list took
1.1 s on SQLite at 1,000,000 events (sorting them by session, then the distinct
kinds), the audit's 0.8 s (its months, for the date drill-down). A list here is
ordered along an index (each admin's `ordering`, newest first), counted once (by
PostgreSQL's estimate when unfiltered and large), and its filters offer fixed choices
(and no "Show counts": a count per choice over every row) (`choices_filter`), and the rows its columns name
are read for the page alone, so opening it reads a page of rows and the counts'
index whatever the history (bench/README.md, "growth").
"""

from collections.abc import Callable, Iterable, Sequence
from functools import cached_property

from django.contrib import admin
from django.core.exceptions import FieldDoesNotExist
from django.core.paginator import Paginator
from django.db import connection

# Past this many rows, an unfiltered list on PostgreSQL says the planner's estimate.
ESTIMATED_FROM = 10_000


class EstimatedCountPaginator(Paginator):
    """Django's paginator, but an unfiltered list of a PostgreSQL table whose
    planner estimate (`pg_class.reltuples`, kept by autovacuum's ANALYZE) is past
    ESTIMATED_FROM rows is counted by that estimate: PostgreSQL's COUNT(*) reads
    every row's index entry (27 ms at 1,000,000 events). A filtered list, and any
    list on SQLite (whose COUNT(*) reads its smallest index: 3 ms there), is
    counted exactly."""

    estimated = False

    @cached_property
    def count(self) -> int:
        rows = self.object_list
        if connection.vendor == "postgresql" and not rows.query.where:
            estimate = _estimated_rows(rows.model._meta.db_table)
            if estimate > ESTIMATED_FROM:
                self.estimated = True
                return estimate
        return super().count

    def page(self, number):
        """Django's page, but a page of an estimated list is never cut at the
        estimate: its last page shows what is there."""
        page = super().page(number)
        if self.estimated:
            bottom = (page.number - 1) * self.per_page
            page.object_list = self.object_list[bottom : bottom + self.per_page]
        return page


def _estimated_rows(table: str) -> int:
    """The planner's estimate of `table`'s rows now: its rows a page at the last
    ANALYZE times its pages now (as PostgreSQL's planner scales it), so rows
    added or removed since move it; -1 if the table was never analyzed."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT CASE WHEN c.reltuples < 0 THEN -1"
            " WHEN c.relpages = 0 THEN c.reltuples"
            " ELSE c.reltuples / c.relpages * (pg_relation_size(c.oid)"
            " / current_setting('block_size')::int) END::bigint"
            " FROM pg_class c WHERE c.oid = to_regclass(%s)",
            [connection.ops.quote_name(table)],
        )
        found = cursor.fetchone()
    return int(found[0]) if found and found[0] is not None else -1


class GrowingTableAdmin(admin.ModelAdmin):
    """A changelist over a table that grows with use: give it an `ordering` an
    index holds, no `date_hierarchy`, and filters with fixed choices.

    The rows a column names (a run's session and user) are read for the page
    alone, a query per relation, never joined: SQLite may reorder an inner join
    and read every run of the table's few users, then sort them all, where the
    page alone was one step down the ordering's index."""

    show_full_result_count = False
    # No "Show counts" beside the filters: a count over every row per choice.
    show_facets = admin.ShowFacets.NEVER
    list_select_related = ()  # no join: get_queryset prefetches them instead
    paginator = EstimatedCountPaginator

    def get_queryset(self, request):
        shown = [
            name
            for name in self.list_display
            if isinstance(name, str) and _names_a_row(self.model, name)
        ]
        return super().get_queryset(request).prefetch_related(*shown)


def _names_a_row(model, name: str) -> bool:
    try:
        return bool(model._meta.get_field(name).many_to_one)
    except FieldDoesNotExist:
        return False


def choices_filter(
    field: str, values: Sequence[str] | Callable[[], Iterable[str]], title: str
) -> type:
    """A list filter on `field` offering `values` (or what a call of it gives,
    as the page opens), not the field's distinct values read from every row
    (Django's filter for a field without choices)."""

    class ChoicesFilter(admin.SimpleListFilter):
        parameter_name = field

        def lookups(self, request, model_admin):
            offered = values() if callable(values) else values
            return [(value, value) for value in offered if value]

        def queryset(self, request, queryset):
            value = self.value()
            return queryset.filter(**{field: value}) if value else queryset

    ChoicesFilter.title = title
    return ChoicesFilter
