"""Usage totals (tokens and money) and daily budgets over the API.

GET /api/usage/?group_by=user|agent|model|day&since=&until= sums the runs a user
may see (their own; staff: everyone's), from the hourly totals kept as runs end
(agents.usage): ended runs, a day in TIME_ZONE the hours that start in it; a
row's `cost` is in the billing currency, at each model's prices as its runs
ended. /api/budgets/ is where staff set a daily budget in tokens, money or both,
per user or group, for all models or one; everyone else sees the budgets that
apply to them.
"""

from datetime import date
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import permissions, serializers, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.adk.providers import connection_problem
from agents.api.views import IsStaffOrReadOnly
from agents.changes import ActorFromRequest
from agents.models import Budget
from agents.params import ID_CONVERTER, given
from agents.usage import budget_status, usage_totals, visible_budgets, visible_totals

GROUP_BY = ["user", "agent", "model", "day"]
MICROS = Decimal(1_000_000)


class UsageQuerySerializer(serializers.Serializer):
    group_by = serializers.ChoiceField(choices=GROUP_BY, default="day")
    since = serializers.DateField(required=False, help_text="First day, included.")
    until = serializers.DateField(required=False, help_text="Last day, included.")

    def validate(self, attrs):
        since, until = attrs.get("since"), attrs.get("until")
        if since and until and since > until:
            raise ValidationError({"until": ["On or after since."]})
        return attrs


class UsageRowSerializer(serializers.Serializer):
    key = serializers.CharField(
        allow_null=True,
        help_text="Username (null: a deleted user), agent name, model (blank: "
        "counted before models were) or day (ISO).",
    )
    runs = serializers.IntegerField(help_text="Runs that ended.")
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()
    cost = serializers.DecimalField(
        max_digits=20,
        decimal_places=6,
        help_text="What the tokens cost, in the billing currency, at the models' "
        "prices (a model without a price costs 0).",
    )


class UsageTotalsSerializer(serializers.Serializer):
    group_by = serializers.CharField()
    since = serializers.DateField(allow_null=True)
    until = serializers.DateField(allow_null=True)
    rows = UsageRowSerializer(many=True)
    total = UsageRowSerializer()


class UsageView(APIView):
    """Runs and tokens per user, agent or day: mine, or everyone's for staff."""

    @extend_schema(
        parameters=[UsageQuerySerializer],
        responses=UsageTotalsSerializer,
    )
    def get(self, request: Request) -> Response:
        query = UsageQuerySerializer(data=given(request.query_params))
        query.is_valid(raise_exception=True)
        group_by = query.validated_data["group_by"]
        since: date | None = query.validated_data.get("since")
        until: date | None = query.validated_data.get("until")
        rows = usage_totals(
            totals=visible_totals(user=request.user, group_by=group_by),
            group_by=group_by,
            since=since,
            until=until,
        )
        rows = [_with_cost(row) for row in rows]
        body = {
            "group_by": group_by,
            "since": since,
            "until": until,
            "rows": rows,
            "total": _total(rows),
        }
        return Response(UsageTotalsSerializer(body).data)


def _total(rows: list[dict]) -> dict:
    fields = ("runs", "prompt_tokens", "completion_tokens", "total_tokens")
    total = {"key": "total", **{f: sum(row[f] for row in rows) for f in fields}}
    total["cost"] = sum((row["cost"] for row in rows), Decimal(0))
    return total


def _with_cost(row: dict) -> dict:
    return {**row, "cost": Decimal(row.pop("cost_micros", 0) or 0) / MICROS}


class BudgetSerializer(serializers.ModelSerializer):
    """A daily budget in tokens, money or both: for a user or for a group, never
    both; for every model (`model` blank) or one."""

    user = serializers.SlugRelatedField(
        slug_field="username",
        queryset=get_user_model().objects.all(),
        required=False,
        allow_null=True,
    )
    group = serializers.SlugRelatedField(
        slug_field="name", queryset=Group.objects.all(), required=False, allow_null=True
    )
    daily_cost = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        min_value=Decimal(0),
        required=False,
        allow_null=True,
        help_text="Money per day in the billing currency; empty: no money limit.",
    )
    model = serializers.CharField(
        max_length=260,
        required=False,
        allow_blank=True,
        help_text="Only runs on this model count, and only its turns are "
        "refused (as agents name it: <connection>/<model>); blank: every model.",
    )
    used_today = serializers.SerializerMethodField()
    remaining_today = serializers.SerializerMethodField()
    spent_today = serializers.SerializerMethodField()
    remaining_cost_today = serializers.SerializerMethodField()

    class Meta:
        model = Budget
        fields = [
            "id",
            "user",
            "group",
            "model",
            "daily_tokens",
            "daily_cost",
            "used_today",
            "remaining_today",
            "spent_today",
            "remaining_cost_today",
            "updated_at",
        ]
        read_only_fields = ["updated_at"]
        extra_kwargs = {"daily_tokens": {"required": False, "allow_null": True}}
        # Uniqueness per owner and model is checked in validate(), in words.
        validators = []

    def validate_model(self, value: str) -> str:
        value = value.strip()
        if value and (problem := connection_problem(value)):
            raise ValidationError(problem)
        return value

    def validate(self, attrs):
        user = attrs.get("user", getattr(self.instance, "user", None))
        group = attrs.get("group", getattr(self.instance, "group", None))
        if bool(user) == bool(group):
            raise ValidationError("Set either a user or a group, not both.")
        tokens = attrs.get("daily_tokens", getattr(self.instance, "daily_tokens", None))
        cost = attrs.get("daily_cost", getattr(self.instance, "daily_cost", None))
        if tokens is None and cost is None:
            raise ValidationError(
                {"daily_tokens": ["Set a daily token limit, a money limit, or both."]}
            )
        model = attrs.get("model", getattr(self.instance, "model", "")).strip()
        attrs["model"] = model
        others = Budget.objects.exclude(pk=getattr(self.instance, "pk", None))
        others = others.filter(model=model)
        scope = f" for {model}" if model else ""
        if user and others.filter(user=user).exists():
            raise ValidationError({"user": [f"This user already has a budget{scope}."]})
        if group and others.filter(group=group).exists():
            raise ValidationError(
                {"group": [f"This group already has a budget{scope}."]}
            )
        return attrs

    def get_used_today(self, budget: Budget) -> int:
        return self._status(budget).used

    def get_remaining_today(self, budget: Budget) -> int | None:
        return self._status(budget).remaining

    @extend_schema_field(serializers.DecimalField(max_digits=20, decimal_places=6))
    def get_spent_today(self, budget: Budget) -> str:
        return _money(self._status(budget).used_micros)

    @extend_schema_field(
        serializers.DecimalField(max_digits=20, decimal_places=6, allow_null=True)
    )
    def get_remaining_cost_today(self, budget: Budget) -> str | None:
        remaining = self._status(budget).remaining_micros
        return None if remaining is None else _money(remaining)

    def _status(self, budget: Budget):
        cache = self.context.setdefault("statuses", {})
        if budget.pk not in cache:
            cache[budget.pk] = budget_status(budget)
        return cache[budget.pk]


def _money(micros: int) -> str:
    return f"{Decimal(micros) / MICROS:.6f}"


class BudgetViewSet(ActorFromRequest, viewsets.ModelViewSet):
    """Daily budgets in tokens and money. Staff set them; users see those that
    apply to them."""

    serializer_class = BudgetSerializer
    permission_classes = [permissions.IsAuthenticated, IsStaffOrReadOnly]
    lookup_value_converter = ID_CONVERTER

    def get_queryset(self):
        return visible_budgets(user=self.request.user)
