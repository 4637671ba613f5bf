"""`/api/gateway/tokens/`: a user's personal access tokens to the MCP gateway.

Listed and revoked by their owner only; a new token is shown in clear once, in
the answer that creates it (toolsets/personal_tokens.py).
"""

from datetime import timedelta

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.client_input import JSONParser, validated
from toolsets import personal_tokens as tokens
from toolsets.models import GatewayToken

NOT_FOUND = OpenApiResponse(description="No such token, or not yours.")


class GatewayTokenSerializer(serializers.ModelSerializer):
    """A token as its owner sees it: never the token itself, only its prefix."""

    toolsets = serializers.SlugRelatedField(
        slug_field="name", many=True, read_only=True
    )

    class Meta:
        model = GatewayToken
        fields = [
            "id",
            "name",
            "prefix",
            "toolsets",
            "created_at",
            "expires_at",
            "last_used_at",
        ]
        read_only_fields = fields


class IssuedTokenSerializer(GatewayTokenSerializer):
    """A token just made, with the token in clear: shown this once."""

    token = serializers.CharField(read_only=True)

    class Meta(GatewayTokenSerializer.Meta):
        fields = [*GatewayTokenSerializer.Meta.fields, "token"]
        read_only_fields = fields


class TokenInputSerializer(serializers.Serializer):
    """The body of a new token (for the schema; tokens.TokenInput validates)."""

    name = serializers.CharField(max_length=100)
    toolsets = serializers.ListField(child=serializers.CharField(), min_length=1)
    expires_in_days = serializers.IntegerField(
        required=False, min_value=1, max_value=tokens.MAX_DAYS, default=90
    )


class GatewayTokensView(APIView):
    """Your personal access tokens to the MCP gateway (`/mcp`)."""

    parser_classes = [JSONParser]

    @extend_schema(responses={200: GatewayTokenSerializer(many=True)})
    def get(self, request: Request) -> Response:
        rows = tokens.tokens_of(user=request.user)
        return Response(GatewayTokenSerializer(rows, many=True).data)

    @extend_schema(
        request=TokenInputSerializer,
        responses={
            201: IssuedTokenSerializer,
            400: OpenApiResponse(description="A bad body, or unknown toolsets."),
            409: OpenApiResponse(description="Too many tokens: revoke one first."),
        },
    )
    def post(self, request: Request) -> Response:
        """Make a token limited to the toolsets named; the answer shows it once."""
        body = validated(tokens.TokenInput, request.data)
        issued = tokens.issue_token(
            user=request.user,
            name=body.name,
            toolsets=body.toolsets,
            expires_in=timedelta(days=body.expires_in_days),
        )
        data = GatewayTokenSerializer(issued.row).data
        return Response({**data, "token": issued.token}, status=status.HTTP_201_CREATED)


class GatewayTokenView(APIView):
    """One of your tokens: revoke it."""

    @extend_schema(responses={204: None, 404: NOT_FOUND})
    def delete(self, request: Request, pk: int) -> Response:
        """Revoke the token: the gateway refuses it (401) from its next request."""
        tokens.revoke_token(user=request.user, token_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)
