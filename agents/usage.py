"""Usage and daily budgets: what runs consumed and cost, and whether a user may go on.

A run's tokens (prompt, completion, total) come from the model's usage data and are
stored on the Run as they arrive; its cost (`cost_of`: tokens x its model's prices
per million, agents.model_table) is stored with its end. A budget limits tokens,
money or both a day, for every model or for one. A user is held to every budget that applies to
them: their own, and each of their groups' (a group's budget is shared by its
members' usage together); budgets read today's runs, a running turn's tokens
included.

Usage (`usage_totals`) reads totals, never the runs: as each run ends, in the
transaction that ends it, its tokens are added to a RunTotal row of the hour (UTC)
it was created, its user, agent and ending (`count_ended_run` for a turn's own end,
`end_run` and `count_ended_runs` for an end written by UPDATE: a stop, a lost or
refused run; `count_late_tokens` for the tokens a stopped turn stores after who
stopped it ended it). So usage counts ended runs (a queued or running one counts
once it ends), and costs the same whatever the number of runs. Each run is also
counted, in the same statement, in a row of every user's runs for each of its
periods (project.periods: its week, day, six hours and hour, UTC): staff's usage by
day, agent or model reads those, a window in the fewest periods (whole weeks, then
days, six hours and hours at its ragged ends; by day, each day's own), a few rows a
period, where a month of every user's hours holds rows by the ten thousand. A day in
TIME_ZONE is the sum of the hours (UTC) that start in it: in a zone whose offset is
not a whole number of hours, an hour that straddles midnight counts on the day it
starts.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import (
    BigIntegerField,
    Count,
    ExpressionWrapper,
    F,
    Q,
    QuerySet,
    Sum,
    Value,
)
from django.db.models.functions import TruncDate, TruncHour
from django.utils import timezone

from agents.model_table import cost_micros, price_of
from agents.models import Budget, Run, RunTotal
from project.counters import Counters
from project.patches.prepared import Param, Prepared
from project.periods import (
    DAY,
    EVERYONE_BY_PERIOD,
    EVERYONE_HOURS,
    HOUR,
    WEEK,
    PeriodStart,
    cover,
    merged,
    period_of,
)

GroupBy = Literal["user", "agent", "model", "day"]
TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")
COUNTED = ("runs", *TOKEN_FIELDS, "cost_micros")
OFFLINE_PREFIX = "offline/"


class BudgetExceeded(Exception):
    """A daily budget of the user's (or one of their groups') is used up."""

    code = "BUDGET_EXCEEDED"


@dataclass(frozen=True)
class BudgetStatus:
    """A budget and what its owner used of it today: tokens, and money in
    millionths of the currency."""

    budget: Budget
    used: int
    used_micros: int = 0

    @property
    def remaining(self) -> int | None:
        """Tokens left today; None without a token limit."""
        if self.budget.daily_tokens is None:
            return None
        return max(self.budget.daily_tokens - self.used, 0)

    @property
    def limit_micros(self) -> int | None:
        """The money limit in millionths of the currency; None without one."""
        if self.budget.daily_cost is None:
            return None
        return int((self.budget.daily_cost * MICROS).to_integral_value())

    @property
    def remaining_micros(self) -> int | None:
        """Money left today, in millionths; None without a money limit."""
        limit = self.limit_micros
        return None if limit is None else max(limit - self.used_micros, 0)

    def tokens_exhausted(self, extra: int = 0) -> bool:
        tokens = self.budget.daily_tokens
        return tokens is not None and self.used + extra >= tokens

    def money_exhausted(self, extra_micros: int = 0) -> bool:
        limit = self.limit_micros
        return limit is not None and self.used_micros + extra_micros >= limit

    def is_exhausted(self, extra: int = 0, extra_micros: int = 0) -> bool:
        """True when the budget has nothing left, counting what is not yet stored."""
        return self.tokens_exhausted(extra) or self.money_exhausted(extra_micros)

    def describe(self, extra: int = 0, extra_micros: int = 0) -> str:
        """The refusal a user reads: which budget, what it allows, what was used."""
        budget = self.budget
        scope = f" for {budget.model}" if budget.model else ""
        if self.tokens_exhausted(extra):
            kind, limit = "token", str(budget.daily_tokens)
            spent = f"{self.used + extra} tokens used today"
        else:
            kind, limit = "spending", money(self.limit_micros)
            spent = f"{money(self.used_micros + extra_micros)} spent today"
        who = (
            f"Your daily {kind} budget{scope} ({limit})"
            if budget.user_id
            else f"The daily {kind} budget{scope} of group {budget.group.name} "
            f"({limit})"
        )
        return (
            f"{who} is used up: {spent}. "
            "It renews at midnight; ask an administrator for more."
        )


MICROS = 1_000_000


def money(micros: int | None) -> str:
    """Millionths of the currency as people read an amount: at least 2 decimals,
    up to 6 for a small one (0.005, 1.50, 12.00)."""
    if micros is None:
        return ""
    whole, _, fraction = f"{micros / MICROS:.6f}".partition(".")
    return f"{whole}.{fraction.rstrip('0').ljust(2, '0')}"


def today_bounds(now: datetime | None = None) -> tuple[datetime, datetime]:
    """Start and end of the current day, in TIME_ZONE."""
    day = timezone.localdate(now)
    return day_start(day), day_start(day + timedelta(days=1))


def day_start(day: date) -> datetime:
    """Midnight at the start of `day`, in TIME_ZONE."""
    return timezone.make_aware(datetime.combine(day, time.min))


def budgets_for(*, user_id: int) -> QuerySet[Budget]:
    """The budgets that apply to a user: their own and their groups'."""
    return (
        Budget.objects.filter(Q(user_id=user_id) | Q(group__user__id=user_id))
        .select_related("user", "group")
        .distinct()
    )


def _counted_runs(budget: Budget, exclude_run_id: Any = None) -> QuerySet[Run]:
    start, end = today_bounds()
    # An eval run's turns (evals) never spend a person's budget.
    runs = Run.objects.filter(created_at__gte=start, created_at__lt=end, eval=False)
    if budget.model:
        runs = runs.filter(model=budget.model)
    if budget.user_id:
        runs = runs.filter(user_id=budget.user_id)
    else:
        runs = runs.filter(user__groups=budget.group_id)
    if exclude_run_id is not None:
        runs = runs.exclude(pk=exclude_run_id)
    return runs


USED = {"n": Sum("total_tokens"), "micros": Sum("cost_micros")}


def budget_status(budget: Budget, *, exclude_run_id: Any = None) -> BudgetStatus:
    """What the budget's owner (user, or group members together) used today."""
    used = _counted_runs(budget, exclude_run_id).aggregate(**USED)
    return BudgetStatus(
        budget=budget, used=used["n"] or 0, used_micros=used["micros"] or 0
    )


async def abudget_status(budget: Budget, *, exclude_run_id: Any = None) -> BudgetStatus:
    """See budget_status()."""
    used = await _counted_runs(budget, exclude_run_id).aaggregate(**USED)
    return BudgetStatus(
        budget=budget, used=used["n"] or 0, used_micros=used["micros"] or 0
    )


def _budgets_of_a_user() -> Prepared:
    user = Param("user_id", Budget._meta.get_field("user"))
    return Prepared(budgets_for(user_id=user))


# budgets_for()'s query, compiled once a process: a turn reads it twice.
BUDGETS_OF_A_USER = _budgets_of_a_user()


def budgets_of(*, user_id: int) -> list[Budget]:
    """See budgets_for(): read at once, by its prepared query."""
    return BUDGETS_OF_A_USER.fetch(user_id=user_id)


async def abudgets_for(*, user_id: int) -> list[Budget]:
    """See budgets_of()."""
    return await sync_to_async(budgets_of)(user_id=user_id)


async def acheck_budget(
    *,
    user_id: int,
    exclude_run_id: Any = None,
    extra_tokens: int = 0,
    extra_micros: int = 0,
    model: str = "",
    budgets: list[Budget] | None = None,
) -> list[Budget]:
    """Raise BudgetExceeded if any budget of the user that applies to `model` has
    nothing left today (a budget for one model applies to that model's turns
    only); else return the user's budgets, so a caller checking again (a turn,
    before each model call) need not read them again.

    Args:
        exclude_run_id: a running turn, whose stored tokens may lag behind.
        extra_tokens: that turn's tokens so far, counted by the caller instead.
        extra_micros: what those tokens cost, in millionths of the currency.
        model: the turn's model, as agents name it.
        budgets: the user's budgets, read earlier (None: read them now).
    """
    if budgets is None:
        budgets = await abudgets_for(user_id=user_id)
    for budget in budgets:
        if budget.model and budget.model != model:
            continue
        status = await abudget_status(budget, exclude_run_id=exclude_run_id)
        if status.is_exhausted(extra_tokens, extra_micros):
            raise BudgetExceeded(status.describe(extra_tokens, extra_micros))
    return budgets


@dataclass(frozen=True)
class Totals:
    """The usage totals a user may see (`visible_totals`): `rows`; with `everyone`,
    every user's rows of each period (project.periods), read in the fewest."""

    rows: QuerySet[RunTotal]
    everyone: bool = False


def usage_totals(
    *,
    totals: Totals,
    group_by: GroupBy,
    since: date | None = None,
    until: date | None = None,
) -> list[dict[str, Any]]:
    """Runs, tokens and cost per user, agent, model or day, between two days (both included,
    in TIME_ZONE), from the totals: one query, whatever the number of runs."""
    if totals.everyone and since is not None:
        totals = totals.rows.filter(_periods(since, until, by_day=group_by == "day"))
    else:  # from the first hour: every user's hours
        everyone = {"user_id": EVERYONE_HOURS} if totals.everyone else {}
        totals = totals.rows.filter(**everyone)
        if since is not None:
            totals = totals.filter(hour__gte=day_start(since))
        if until is not None:
            totals = totals.filter(hour__lt=day_start(until + timedelta(days=1)))
    # By day: on PostgreSQL, the hours summed by their day in TIME_ZONE in SQL (a
    # month of staff's hours is 720 rows, each made a Python row for nothing); on
    # SQLite (a date function per row is a Python call there) summed by hour in
    # SQL, the hours then put in their TIME_ZONE days here.
    in_sql = group_by == "day" and connection.vendor == "postgresql"
    key = {
        "user": F("user_id"),
        "agent": F("agent"),
        "model": F("model"),
        "day": TruncDate("hour", tzinfo=timezone.get_current_timezone())
        if in_sql
        else F("hour"),
    }
    rows = list(
        totals.order_by()
        .annotate(key=key[group_by])
        .values("key")
        .annotate(**{name: Sum(name) for name in COUNTED})
        .order_by("key")
    )
    if in_sql:
        return [_day_row(row) for row in rows]
    if group_by == "day":
        return _by_day(rows)
    rows = [_row(row) for row in rows]
    if group_by == "user":
        return _by_username(rows)
    return rows


def _periods(since: date, until: date | None, *, by_day: bool) -> Q:
    """Every user's rows that count the hours (UTC) starting from the first day's
    start (TIME_ZONE) to the last day's end (`until` None: every hour from then on),
    in the fewest periods; `by_day`: each day's in its own, none longer than a day."""
    first = _hour_at_or_after(day_start(since))
    if until is not None:
        last, later = _hour_at_or_after(day_start(until + timedelta(days=1))), Q()
    else:  # the hours from the current one on, as they are: it is not over
        last = max(first, hour_of(timezone.now()))
        later = Q(user_id=EVERYONE_HOURS, hour__gte=last)
    bounds = [first]
    day = since + timedelta(days=1)
    while by_day and (start := _hour_at_or_after(day_start(day))) < last:
        bounds.append(start)
        day += timedelta(days=1)
    bounds.append(last)
    ranges = [
        each
        for start, end in zip(bounds, bounds[1:], strict=False)
        for each in cover(start, end, DAY if by_day else WEEK)
    ]
    within = Q(pk__in=[]) if not ranges and not later else later
    for user_id, start, end in merged(ranges):
        within |= Q(user_id=user_id, hour__gte=start, hour__lt=end)
    return within


def _hour_at_or_after(moment: datetime) -> datetime:
    """The first hour's start (UTC) at or after `moment`."""
    hour = hour_of(moment)
    return hour if hour == moment else hour + timedelta(hours=1)


def _by_day(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows keyed by hour, summed by their day in TIME_ZONE (ISO), in order."""
    days: dict[str, dict[str, Any]] = {}
    for row in rows:
        day = timezone.localdate(row["key"]).isoformat()
        kept = days.setdefault(day, {"key": day, **dict.fromkeys(COUNTED, 0)})
        for name in COUNTED:
            kept[name] += row[name] or 0
    return sorted(days.values(), key=lambda row: row["key"])


def _day_row(row: dict[str, Any]) -> dict[str, Any]:
    """A day's row summed in SQL, as _by_day gives it."""
    return {"key": row["key"].isoformat(), **{n: row[n] or 0 for n in COUNTED}}


def _by_username(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows keyed by user id, keyed by username instead (one query), in its order;
    a deleted user's as None."""
    ids = [row["key"] for row in rows]
    names = dict(
        get_user_model().objects.filter(pk__in=ids).values_list("pk", "username")
    )
    named = [{**row, "key": names.get(row["key"])} for row in rows]
    return sorted(named, key=lambda row: (row["key"] is None, row["key"] or ""))


def visible_totals(*, user, group_by: GroupBy = "user") -> Totals:
    """The usage totals a user may see, as `group_by` reads them: their own;
    staff, everyone's (by user, the users' rows; else every user's periods)."""
    if not user.is_staff:
        return Totals(RunTotal.objects.filter(user_id=user.pk))
    if group_by == "user":
        return Totals(RunTotal.objects.filter(user_id__gte=0))
    return Totals(RunTotal.objects.filter(user_id__lt=0), everyone=True)


# The run totals' key and counters (project.counters adds to them).
RUN_TOTALS = Counters(
    RunTotal,
    key=["hour", "user_id", "agent", "model", "outcome"],
    sums=COUNTED,
)


def hour_of(moment: datetime) -> datetime:
    """The start of the hour (UTC) of `moment`."""
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def count_ended_run(run: Run) -> None:
    """Add a run its turn just ended to the totals, from the Run in memory (its
    session read with it): in the transaction that stores its end, one statement.
    An eval run's turn (evals) is in no one's totals."""
    if run.eval:
        return
    row = {
        "hour": hour_of(run.created_at),
        "user_id": run.user_id,
        "agent": run.session.app_name,
        "model": run.model,
        "outcome": run.status,
        "runs": 1,
        **{name: getattr(run, name) for name in TOKEN_FIELDS},
        "cost_micros": run.cost_micros,
    }
    RUN_TOTALS.add(
        [
            row,
            *(
                {**row, "hour": period_of(run.created_at, size), "user_id": everyone}
                for size, everyone in EVERYONE_BY_PERIOD.items()
            ),
        ]
    )


def count_ended_runs(runs: QuerySet[Run]) -> None:
    """Add ended runs, as stored, to the totals: one statement that reads them (in
    the transaction that ended them); eval runs' turns are in no one's totals."""
    runs = runs.filter(eval=False)
    for size, everyone in WHOSE:
        RUN_TOTALS.add_query(
            _by_key(runs, size=size, everyone=everyone).values_list(
                *_KEY, "n", *TOKEN_FIELDS, "cost_micros"
            )
        )


def count_late_tokens(run: Run) -> None:
    """Add the tokens a run counted beyond those stored on it (a stopped turn's,
    stored after who stopped it counted the run): call it before storing them."""
    if run.eval:
        return
    late = {
        name: ExpressionWrapper(
            Value(getattr(run, name)) - F(name), output_field=BigIntegerField()
        )
        for name in (*TOKEN_FIELDS, "cost_micros")
    }
    for size, everyone in WHOSE:
        rows = _by_key(
            Run.objects.filter(pk=run.pk), count=False, size=size, everyone=everyone
        ).annotate(
            **{f"late_{name}": Sum(expression) for name, expression in late.items()}
        )
        RUN_TOTALS.add_query(
            rows.values_list(
                *_KEY,
                "n",
                *(f"late_{name}" for name in (*TOKEN_FIELDS, "cost_micros")),
            )
        )


def cost_of(run: Run) -> int:
    """What a run's tokens cost at its model's prices, in millionths of the
    currency; 0 for the offline model or a model without a price (which costs
    no query)."""
    if not run.model or run.model.startswith(OFFLINE_PREFIX) or not run.total_tokens:
        return 0
    return cost_micros(
        price=price_of(run.model),
        prompt=run.prompt_tokens,
        completion=run.completion_tokens,
    )


def end_run(*, run_id: Any, where: Mapping[str, Any], **ending: Any) -> bool:
    """End one run by a conditional UPDATE (`where`: e.g. its status) and count it
    in the totals, in one transaction; whether this call ended it."""
    with transaction.atomic():
        if not Run.objects.filter(pk=run_id, **where).update(**ending):
            return False
        count_ended_runs(Run.objects.filter(pk=run_id))
    return True


_KEY = ("run_hour", "run_user", "session__app_name", "model", "status")
# The rows each run counts in: its user's hour, and every user's periods.
WHOSE = [(HOUR, None), *EVERYONE_BY_PERIOD.items()]


def _by_key(
    runs: QuerySet[Run],
    *,
    count: bool = True,
    size: int = HOUR,
    everyone: int | None = None,
) -> QuerySet[Run]:
    """`runs` grouped by the totals' key (`everyone`: their periods of `size`
    seconds, under that user_id for every user); with `count`, their number and
    tokens."""
    user = F("user_id") if everyone is None else Value(everyone)
    period = (
        TruncHour("created_at", tzinfo=UTC)
        if size == HOUR
        else PeriodStart("created_at", size=size)
    )
    grouped = runs.order_by().annotate(run_hour=period, run_user=user).values(*_KEY)
    if not count:
        return grouped.annotate(n=Value(0, output_field=BigIntegerField()))
    sums = {name: Sum(name) for name in (*TOKEN_FIELDS, "cost_micros")}
    return grouped.annotate(n=Count("id"), **sums)


def visible_budgets(*, user) -> QuerySet[Budget]:
    """Budgets a user may see: those that apply to them; staff, all."""
    if user.is_staff:
        return Budget.objects.select_related("user", "group")
    return budgets_for(user_id=user.pk)


def _row(row: dict[str, Any]) -> dict[str, Any]:
    return {"key": row["key"], **{name: row[name] or 0 for name in COUNTED}}
