"""Approvals over REST: the inbox of pending tool calls, and the decision."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from agents.api.serializers import RunSerializer
from agents.api.views import _run_response
from toolsets import approvals
from toolsets.models import Approval


class ApprovalSerializer(serializers.ModelSerializer):
    decided_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    session = serializers.CharField(source="session_id", read_only=True)

    class Meta:
        model = Approval
        fields = [
            "id",
            "session",
            "status",
            "tool_name",
            "args",
            "hint",
            "agent",
            "call_id",
            "tool_call_id",
            "invocation_id",
            "approver_group",
            "decided_by",
            "decided_at",
            "answer_run_id",
            "expires_at",
            "created_at",
        ]
        read_only_fields = fields


class DecisionSerializer(serializers.Serializer):
    approved = serializers.BooleanField(required=True)

    def to_internal_value(self, data):
        if not isinstance(data, dict) or not isinstance(data.get("approved"), bool):
            raise ValidationError({"approved": ["Must be true or false."]})
        return super().to_internal_value(data)


class ApprovalViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Tool calls waiting for (or given) a person's approval: mine, and my groups'."""

    serializer_class = ApprovalSerializer

    def get_queryset(self):
        rows = approvals.visible_approvals(user=self.request.user)
        wanted = self.request.query_params.get("status")
        if wanted:
            if wanted not in Approval.Status.values:
                raise ValidationError({"status": [f"Unknown status {wanted!r}."]})
            rows = rows.filter(status=wanted)
        session = self.request.query_params.get("session")
        if session:
            rows = rows.filter(session_id=session)
        return rows

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=Approval.Status.values),
            OpenApiParameter("session", str, description="Only this session's."),
        ]
    )
    def list(self, request: Request, *args, **kwargs) -> Response:
        approvals.expire_due()
        rows = self.get_queryset()[:200]
        return Response(ApprovalSerializer(rows, many=True).data)

    def retrieve(self, request: Request, pk=None) -> Response:
        approval = approvals.access_approval(user=request.user, approval_id=pk)
        return Response(ApprovalSerializer(approval).data)

    @extend_schema(
        request=DecisionSerializer,
        responses={200: RunSerializer, 202: RunSerializer},
        parameters=[
            OpenApiParameter(
                "wait", bool, description="Answer when the resumed turn has ended."
            )
        ],
    )
    @action(detail=True, methods=["post"], parser_classes=[JSONParser])
    def decide(self, request: Request, pk=None) -> Response:
        """Approve or reject; the agent resumes (the tool runs only if approved)."""
        data = DecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = approvals.decide(
            user=request.user,
            approval_id=pk,
            approved=data.validated_data["approved"],
        )
        return _run_response(request, run)
