"""Credentials over REST: requests waiting for my answer, the answer, my stored ones.

No response here carries a secret: a stored credential is listed by its metadata,
and an answer is acknowledged with the Run that resumes the tool.
"""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request as HttpRequest
from rest_framework.response import Response

from agents import credentials
from agents.answers.answer import answer_request
from agents.api.inputs import JSONParser, validated
from agents.api.oauth2 import redirect_uri
from agents.api.serializers import RunSerializer, request_status
from agents.api.views import _run_response
from agents.inputs import CredentialAnswer
from agents.models import Credential, Request
from agents.oauth2 import authorization_url
from agents.params import ID_CONVERTER
from agents.requests import inbox
from agents.requests.kinds import CREDENTIAL


class CredentialRequestSerializer(serializers.ModelSerializer):
    # A request of kind "credential": what is asked, never a secret.

    session = serializers.CharField(source="session_id", read_only=True)
    run = serializers.UUIDField(source="run_id", read_only=True)
    status = request_status(CREDENTIAL, read_only=True)
    call_id = serializers.CharField(read_only=True)
    tool_call_id = serializers.CharField(read_only=True)
    auth_config = serializers.JSONField(read_only=True)
    authorization_url = serializers.SerializerMethodField(
        help_text="An OAuth2 sign-in's: open it in the browser; the provider sends "
        "the user back to /api/oauth2/callback/, which answers the request. Null "
        "for a credential answered with fields."
    )
    answer_run = serializers.UUIDField(source="answer_run_id", read_only=True)

    class Meta:
        model = Request
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
            "authorization_url",
            "answer_run",
            "created_at",
            "answered_at",
        ]
        read_only_fields = fields

    def get_authorization_url(self, request: Request) -> str | None:
        http = self.context.get("request")
        if http is None:
            return None
        return authorization_url(request, redirect_uri=redirect_uri(http))


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
        rows = inbox.visible(user=self.request.user, kind=CREDENTIAL)
        wanted = self.request.query_params.get("status")
        if wanted:
            if wanted not in CREDENTIAL.statuses:
                raise ValidationError({"status": [f"Unknown status {wanted!r}."]})
            rows = rows.filter(status=wanted)
        return rows

    @extend_schema(
        parameters=[OpenApiParameter("status", str, enum=list(CREDENTIAL.statuses))]
    )
    def list(self, request: HttpRequest, *args, **kwargs) -> Response:
        rows = self.get_queryset()[:200]
        context = {"request": request}
        return Response(
            CredentialRequestSerializer(rows, many=True, context=context).data
        )

    def retrieve(self, request: HttpRequest, pk=None) -> Response:
        found = inbox.readable_request(
            user=request.user, kind=CREDENTIAL, request_id=pk
        )
        return Response(
            CredentialRequestSerializer(found, context={"request": request}).data
        )

    @extend_schema(
        request=CredentialAnswer,
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
    def answer(self, request: HttpRequest, pk=None) -> Response:
        """Give the credential; it is stored encrypted and the tool runs again."""
        answer = validated(CredentialAnswer, request.data)
        run = answer_request(
            user=request.user,
            kind=CREDENTIAL,
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

    def destroy(self, request: HttpRequest, pk=None) -> Response:
        credentials.revoke_credential(user=request.user, credential_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)
