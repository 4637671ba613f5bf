"""The retention job's dry run over the API, for staff: GET /api/retention/.

What the settings keep, and what a run would remove now, by kind and agent
(agents.retention.jobs.plan_retention; docs/retention.md). Reading it changes
nothing; the job itself runs on its schedule or by `manage.py retention`.
"""

from dataclasses import asdict

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.models import AgentSpec
from agents.params import given
from agents.retention.jobs import plan_retention


class RetentionQuerySerializer(serializers.Serializer):
    agent = serializers.CharField(
        required=False, max_length=100, help_text="Only this agent's rows."
    )

    def validate_agent(self, value: str) -> str:
        if not AgentSpec.objects.filter(name=value).exists():
            raise serializers.ValidationError("No agent is named so.")
        return value


class RetentionCountSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text='"sessions", "events", "tool calls", ...')
    agent = serializers.CharField(help_text="The agent's name; blank: none.")
    rows = serializers.IntegerField()
    oldest = serializers.DateTimeField(
        allow_null=True,
        help_text="The oldest last activity of the sessions, or call of the audit.",
    )


class RetentionPlanSerializer(serializers.Serializer):
    sessions_days = serializers.IntegerField(
        help_text="TOOLCRIB_RETENTION_DAYS; 0: kept forever. An agent's "
        "retention_days wins."
    )
    audit_days = serializers.IntegerField(help_text="TOOLCRIB_RETENTION_AUDIT_DAYS.")
    archived = serializers.BooleanField(
        help_text="Whether a run writes what it removes to a file first."
    )
    every_seconds = serializers.FloatField(
        help_text="TOOLCRIB_RETENTION_SECONDS; 0: only by hand."
    )
    would_remove = RetentionCountSerializer(many=True)


class RetentionView(APIView):
    """Staff: what retention keeps, and what its next run would remove."""

    permission_classes = [permissions.IsAdminUser]

    @extend_schema(
        parameters=[RetentionQuerySerializer], responses=RetentionPlanSerializer
    )
    def get(self, request: Request) -> Response:
        query = RetentionQuerySerializer(data=given(request.query_params))
        query.is_valid(raise_exception=True)
        plan = plan_retention(agent=query.validated_data.get("agent"))
        return Response(
            {
                "sessions_days": settings.TOOLCRIB_RETENTION_DAYS,
                "audit_days": settings.TOOLCRIB_RETENTION_AUDIT_DAYS,
                "archived": bool(settings.TOOLCRIB_RETENTION_ARCHIVE_DIR),
                "every_seconds": settings.TOOLCRIB_RETENTION_SECONDS,
                "would_remove": [asdict(count) for count in plan.counts],
            }
        )
