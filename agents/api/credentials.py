"""Credentials over REST: requests waiting for my answer, the answer, my stored ones.

No response here carries a secret: a stored credential is listed by its metadata,
and an answer is acknowledged with the Run that resumes the tool.
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from agents import credentials
from agents.api.inputs import JSONParser, validated
from agents.api.serializers import RunSerializer
from agents.api.views import _run_response
from agents.inputs import CredentialAnswer
from agents.models import Credential, CredentialRequest
from agents.params import ID_CONVERTER


class CredentialRequestSerializer(serializers.ModelSerializer):
    session = serializers.CharField(source="session_id", read_only=True)
    run = serializers.UUIDField(source="run_id", read_only=True)
    answer_run = serializers.UUIDField(source="answer_run_id", read_only=True)

    class Meta:
        model = CredentialRequest
        fields = [
            "id",
            "session",
            "run",
            "status",
            "call_id",
            "tool_call_id",
            "tool_name",
            "agent",
            "invocation_id",
            "credential_key",
            "scheme",
            "auth_config",
            "answer_run",
            "created_at",
            "answered_at",
        ]
        read_only_fields = fields


class CredentialSerializer(serializers.ModelSerializer):
    """A stored credential's metadata; the secret is never part of it."""

    app = serializers.CharField(
        source="app_name",
        read_only=True,
        help_text="The agent (app) it was given to; only that agent's tools use it.",
    )

    class Meta:
        model = Credential
        fields = [
            "id",
            "app",
            "key",
            "auth_type",
            "scheme",
            "agent",
            "tool_name",
            "created_at",
            "updated_at",
            "last_used_at",
        ]
        read_only_fields = fields


class AuthRequestViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Tools of my sessions that asked for a credential: pending, or answered."""

    serializer_class = CredentialRequestSerializer
    lookup_value_converter = ID_CONVERTER

    def get_queryset(self):
        rows = CredentialRequest.objects.filter(session__owner=self.request.user)
        wanted = self.request.query_params.get("status")
        if wanted:
            if wanted not in CredentialRequest.Status.values:
                raise ValidationError({"status": [f"Unknown status {wanted!r}."]})
            rows = rows.filter(status=wanted)
        return rows

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=CredentialRequest.Status.values)
        ]
    )
    def list(self, request: Request, *args, **kwargs) -> Response:
        rows = self.get_queryset()[:200]
        return Response(CredentialRequestSerializer(rows, many=True).data)

    def retrieve(self, request: Request, pk=None) -> Response:
        found = credentials.access_auth_request(user=request.user, request_id=pk)
        return Response(CredentialRequestSerializer(found).data)

    @extend_schema(
        request=CredentialAnswer,
        responses={200: RunSerializer, 202: RunSerializer},
        parameters=[
            OpenApiParameter(
                "wait", bool, description="Answer when the resumed turn has ended."
            )
        ],
    )
    @action(detail=True, methods=["post"], parser_classes=[JSONParser])
    def answer(self, request: Request, pk=None) -> Response:
        """Give the credential; it is stored encrypted and the tool runs again."""
        answer = validated(CredentialAnswer, request.data)
        run = credentials.answer_auth_request(
            user=request.user,
            request_id=pk,
            answer=answer.model_dump(exclude_none=True),
        )
        return _run_response(request, run)


class CredentialViewSet(
    mixins.ListModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet
):
    """The credentials I gave tools (metadata only); delete one to revoke it."""

    serializer_class = CredentialSerializer
    lookup_value_converter = ID_CONVERTER

    def get_queryset(self):
        return credentials.user_credentials(user=self.request.user)

    def destroy(self, request: Request, pk=None) -> Response:
        credentials.revoke_credential(user=request.user, credential_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)
