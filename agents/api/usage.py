"""Token usage totals and daily budgets over the API.

GET /api/usage/?group_by=user|agent|day&since=&until= sums the runs a user may see
(their own; staff: everyone's), from the hourly totals kept as runs end
(agents.usage): ended runs, a day in TIME_ZONE the hours that start in it. /api/budgets/ is where staff set a daily token
budget per user or group; everyone else sees the budgets that apply to them.
"""

from datetime import date

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.api.views import IsStaffOrReadOnly
from agents.changes import ActorFromRequest
from agents.models import Budget
from agents.params import ID_CONVERTER, given
from agents.usage import budget_status, usage_totals, visible_budgets, visible_totals

GROUP_BY = ["user", "agent", "day"]


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
        help_text="Username (null: a deleted user), agent name or day (ISO).",
    )
    runs = serializers.IntegerField(help_text="Runs that ended.")
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()


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
            totals=visible_totals(user=request.user),
            group_by=group_by,
            since=since,
            until=until,
        )
        return Response(
            {
                "group_by": group_by,
                "since": since,
                "until": until,
                "rows": rows,
                "total": _total(rows),
            }
        )


def _total(rows: list[dict]) -> dict:
    fields = ("runs", "prompt_tokens", "completion_tokens", "total_tokens")
    return {"key": "total", **{f: sum(row[f] for row in rows) for f in fields}}


class BudgetSerializer(serializers.ModelSerializer):
    """A daily token budget: for a user or for a group, never both."""

    user = serializers.SlugRelatedField(
        slug_field="username",
        queryset=get_user_model().objects.all(),
        required=False,
        allow_null=True,
    )
    group = serializers.SlugRelatedField(
        slug_field="name", queryset=Group.objects.all(), required=False, allow_null=True
    )
    used_today = serializers.SerializerMethodField()
    remaining_today = serializers.SerializerMethodField()

    class Meta:
        model = Budget
        fields = [
            "id",
            "user",
            "group",
            "daily_tokens",
            "used_today",
            "remaining_today",
            "updated_at",
        ]
        read_only_fields = ["updated_at"]

    def validate(self, attrs):
        user = attrs.get("user", getattr(self.instance, "user", None))
        group = attrs.get("group", getattr(self.instance, "group", None))
        if bool(user) == bool(group):
            raise ValidationError("Set either a user or a group, not both.")
        others = Budget.objects.exclude(pk=getattr(self.instance, "pk", None))
        if user and others.filter(user=user).exists():
            raise ValidationError({"user": ["This user already has a budget."]})
        if group and others.filter(group=group).exists():
            raise ValidationError({"group": ["This group already has a budget."]})
        return attrs

    def get_used_today(self, budget: Budget) -> int:
        return self._status(budget).used

    def get_remaining_today(self, budget: Budget) -> int:
        return self._status(budget).remaining

    def _status(self, budget: Budget):
        cache = self.context.setdefault("statuses", {})
        if budget.pk not in cache:
            cache[budget.pk] = budget_status(budget)
        return cache[budget.pk]


class BudgetViewSet(ActorFromRequest, viewsets.ModelViewSet):
    """Daily token budgets. Staff set them; users see those that apply to them."""

    serializer_class = BudgetSerializer
    permission_classes = [permissions.IsAuthenticated, IsStaffOrReadOnly]
    lookup_value_converter = ID_CONVERTER

    def get_queryset(self):
        return visible_budgets(user=self.request.user)
