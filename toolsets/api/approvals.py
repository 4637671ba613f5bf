"""Approvals over REST: the inbox of pending tool calls, and the decision."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from agents.api.inputs import JSONParser, validated
from agents.api.serializers import RunSerializer
from agents.api.views import _run_response
from agents.inputs import DecisionInput
from agents.params import ID_CONVERTER
from toolsets import approvals
from toolsets.models import Approval


class ApprovalSerializer(serializers.ModelSerializer):
    decided_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    session = serializers.CharField(source="session_id", read_only=True)
    may_decide = serializers.SerializerMethodField(
        help_text="Whether the signed-in user may decide it (if still pending)."
    )

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
            "may_decide",
        ]
        read_only_fields = fields

    def get_may_decide(self, approval: Approval) -> bool:
        user = self.context["request"].user
        return approvals.may_decide(user=user, approval=approval)


class ApprovalViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Tool calls waiting for (or given) a person's approval: mine, and my groups'."""

    serializer_class = ApprovalSerializer
    lookup_value_converter = ID_CONVERTER

    def get_queryset(self):
        session = self.request.query_params.get("session")
        if session:
            rows = approvals.session_approvals(
                user=self.request.user, session_id=session
            )
        else:
            rows = approvals.visible_approvals(user=self.request.user)
        wanted = self.request.query_params.get("status")
        if wanted:
            if wanted not in Approval.Status.values:
                raise ValidationError({"status": [f"Unknown status {wanted!r}."]})
            rows = rows.filter(status=wanted)
        return rows

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=Approval.Status.values),
            OpenApiParameter(
                "session",
                str,
                description="Only this session's; its owner also sees the requests an"
                " approver group decides (may_decide false).",
            ),
        ]
    )
    def list(self, request: Request, *args, **kwargs) -> Response:
        approvals.expire_due()
        rows = self.get_queryset()[:200]
        context = self.get_serializer_context()
        return Response(ApprovalSerializer(rows, many=True, context=context).data)

    def retrieve(self, request: Request, pk=None) -> Response:
        approval = approvals.readable_approval(user=request.user, approval_id=pk)
        context = self.get_serializer_context()
        return Response(ApprovalSerializer(approval, context=context).data)

    @extend_schema(
        request=DecisionInput,
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
        decision = validated(DecisionInput, request.data)
        run = approvals.decide(
            user=request.user, approval_id=pk, approved=decision.approved
        )
        return _run_response(request, run)
