"""Approvals over REST: the inbox of pending tool calls, and the decision.

An approval is a request of kind "approval" (agents.requests); its id is the
request's, and matches no request of another kind.
"""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request as HttpRequest
from rest_framework.response import Response

from agents.answers.answer import answer_request
from agents.api.inputs import JSONParser, validated
from agents.api.serializers import RunSerializer, request_status
from agents.api.views import _run_response
from agents.inputs import DecisionInput
from agents.models import Request
from agents.params import ID_CONVERTER
from agents.requests import inbox, rules
from agents.requests.kinds import APPROVAL


class ApprovalSerializer(serializers.ModelSerializer):
    session = serializers.CharField(source="session_id", read_only=True)
    status = request_status(APPROVAL, read_only=True)
    call_id = serializers.CharField(
        read_only=True, help_text="The adk_request_confirmation call's id."
    )
    tool_call_id = serializers.CharField(read_only=True)
    approver_group = serializers.CharField(source="answer_group", read_only=True)
    decided_by = serializers.SlugRelatedField(
        source="answered_by", slug_field="username", read_only=True
    )
    decided_at = serializers.DateTimeField(
        source="answered_at", read_only=True, allow_null=True
    )
    answer_run_id = serializers.UUIDField(read_only=True, allow_null=True)
    expires_at = serializers.DateTimeField(
        read_only=True,
        allow_null=True,
        help_text="Rejected as expired after this; blank: never.",
    )
    may_decide = serializers.SerializerMethodField(
        help_text="Whether the signed-in user may decide it (if still pending)."
    )
    comment = serializers.CharField(
        read_only=True, help_text="The decider's comment, if any."
    )

    class Meta:
        model = Request
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
            "comment",
            "approvals_required",
            "approved_args",
        ]
        read_only_fields = fields

    def get_may_decide(self, approval: Request) -> bool:
        user = self.context["request"].user
        return rules.may_answer(user=user, request=approval)


class ApprovalViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Tool calls waiting for (or given) a person's approval: mine, and my groups'."""

    serializer_class = ApprovalSerializer
    lookup_value_converter = ID_CONVERTER

    def get_queryset(self):
        user = self.request.user
        session = self.request.query_params.get("session")
        if session:
            rows = inbox.visible(user=user, kind=APPROVAL).filter(session_id=session)
        else:
            rows = inbox.addressed(user=user, kind=APPROVAL)
        wanted = self.request.query_params.get("status")
        if wanted:
            if wanted not in APPROVAL.statuses:
                raise ValidationError({"status": [f"Unknown status {wanted!r}."]})
            rows = rows.filter(status=wanted)
        return rows

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=list(APPROVAL.statuses)),
            OpenApiParameter(
                "session",
                str,
                description="Only this session's; its owner also sees the requests an"
                " approver group decides (may_decide false).",
            ),
        ]
    )
    def list(self, request: HttpRequest, *args, **kwargs) -> Response:
        rows = self.get_queryset()[:200]
        context = self.get_serializer_context()
        return Response(ApprovalSerializer(rows, many=True, context=context).data)

    def retrieve(self, request: HttpRequest, pk=None) -> Response:
        approval = inbox.readable_request(
            user=request.user, kind=APPROVAL, request_id=pk
        )
        context = self.get_serializer_context()
        return Response(ApprovalSerializer(approval, context=context).data)

    @extend_schema(
        request=DecisionInput,
        responses={
            200: RunSerializer,
            202: RunSerializer,
            409: OpenApiResponse(description="The session is closed."),
        },
        parameters=[
            OpenApiParameter(
                "wait", bool, description="Answer when the resumed turn has ended."
            )
        ],
    )
    @action(detail=True, methods=["post"], parser_classes=[JSONParser])
    def decide(self, request: HttpRequest, pk=None) -> Response:
        """Approve or reject; the agent resumes (the tool runs only if approved)."""
        decision = validated(DecisionInput, request.data)
        run = answer_request(
            user=request.user,
            kind=APPROVAL,
            request_id=pk,
            answer=decision.answer(),
        )
        return _run_response(request, run)
