"""Token usage and daily budgets: what runs consumed, and whether a user may go on.

A run's tokens (prompt, completion, total) come from the model's usage data and are
stored on the Run as they arrive. A run counts on the day it was created (in
TIME_ZONE). A user is held to every budget that applies to them: their own, and
each of their groups' (a group's budget is shared by its members' usage together).
"""

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any, Literal

from asgiref.sync import sync_to_async
from django.db.models import Count, F, Q, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from agents.models import Budget, Run
from project.prepared import Param, Prepared

GroupBy = Literal["user", "agent", "day"]
TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")


class BudgetExceeded(Exception):
    """A user's daily token budget (or one of their groups') is used up."""

    code = "BUDGET_EXCEEDED"


@dataclass(frozen=True)
class BudgetStatus:
    """A budget and what its owner used of it today."""

    budget: Budget
    used: int

    @property
    def remaining(self) -> int:
        return max(self.budget.daily_tokens - self.used, 0)

    def is_exhausted(self, extra: int = 0) -> bool:
        """True when the budget has no tokens left, counting `extra` not yet stored."""
        return self.used + extra >= self.budget.daily_tokens

    def describe(self, extra: int = 0) -> str:
        """The refusal a user reads."""
        budget = self.budget
        who = (
            f"Your daily token budget ({budget.daily_tokens})"
            if budget.user_id
            else f"The daily token budget of group {budget.group.name} "
            f"({budget.daily_tokens})"
        )
        used = self.used + extra
        return (
            f"{who} is used up: {used} tokens used today. "
            "It renews at midnight; ask an administrator for more."
        )


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
    runs = Run.objects.filter(created_at__gte=start, created_at__lt=end)
    if budget.user_id:
        runs = runs.filter(user_id=budget.user_id)
    else:
        runs = runs.filter(user__groups=budget.group_id)
    if exclude_run_id is not None:
        runs = runs.exclude(pk=exclude_run_id)
    return runs


def budget_status(budget: Budget, *, exclude_run_id: Any = None) -> BudgetStatus:
    """What the budget's owner (user, or group members together) used today."""
    used = _counted_runs(budget, exclude_run_id).aggregate(n=Sum("total_tokens"))["n"]
    return BudgetStatus(budget=budget, used=used or 0)


async def abudget_status(budget: Budget, *, exclude_run_id: Any = None) -> BudgetStatus:
    """See budget_status()."""
    totals = await _counted_runs(budget, exclude_run_id).aaggregate(
        n=Sum("total_tokens")
    )
    return BudgetStatus(budget=budget, used=totals["n"] or 0)


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
    budgets: list[Budget] | None = None,
) -> list[Budget]:
    """Raise BudgetExceeded if any budget of the user has no tokens left today;
    else return the budgets checked, so a caller checking again (a turn, before
    each model call) need not read them again.

    Args:
        exclude_run_id: a running turn, whose stored tokens may lag behind.
        extra_tokens: that turn's tokens so far, counted by the caller instead.
        budgets: the user's budgets, read earlier (None: read them now).
    """
    if budgets is None:
        budgets = await abudgets_for(user_id=user_id)
    for budget in budgets:
        status = await abudget_status(budget, exclude_run_id=exclude_run_id)
        if status.is_exhausted(extra_tokens):
            raise BudgetExceeded(status.describe(extra_tokens))
    return budgets


def usage_totals(
    *,
    runs: QuerySet[Run],
    group_by: GroupBy,
    since: date | None = None,
    until: date | None = None,
) -> list[dict[str, Any]]:
    """Runs and tokens per user, agent or day, between two days (both included)."""
    if since is not None:
        runs = runs.filter(created_at__gte=day_start(since))
    if until is not None:
        runs = runs.filter(created_at__lt=day_start(until + timedelta(days=1)))
    key = {
        "user": F("user__username"),
        "agent": F("session__app_name"),
        "day": TruncDate("created_at"),
    }[group_by]
    rows = (
        runs.order_by()
        .annotate(key=key)
        .values("key")
        .annotate(runs=Count("id"), **{name: Sum(name) for name in TOKEN_FIELDS})
        .order_by("key")
    )
    return [_row(row) for row in rows]


def visible_runs(*, user) -> QuerySet[Run]:
    """The runs whose usage a user may see: their own; staff, everyone's."""
    if user.is_staff:
        return Run.objects.all()
    return Run.objects.filter(user=user)


def visible_budgets(*, user) -> QuerySet[Budget]:
    """Budgets a user may see: those that apply to them; staff, all."""
    if user.is_staff:
        return Budget.objects.select_related("user", "group")
    return budgets_for(user_id=user.pk)


def _row(row: dict[str, Any]) -> dict[str, Any]:
    key = row["key"]
    return {
        "key": key.isoformat() if isinstance(key, date) else key,
        "runs": row["runs"],
        **{name: row[name] or 0 for name in TOKEN_FIELDS},
    }
