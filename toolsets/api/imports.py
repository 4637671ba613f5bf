"""Imports over REST (staff only): register an MCP server or an OpenAPI spec, list,
refresh, delete. Secrets of a registration (env, headers, a spec's text, a
command's arguments, a URL's user or query) are accepted, never returned.
"""

from typing import Any

import pydantic
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from agents.client_input import ID_CONVERTER
from toolsets.import_registry import (
    ImportNameTaken,
    delete_import,
    refresh_import,
    register_import,
)
from toolsets.imports.registrations import (
    ImportFailed,
    McpServer,
    OpenApiSpec,
)
from toolsets.imports.stored import shown_of_row
from toolsets.models import ToolImport

COMMON_FIELDS = {"name", "url", "tool_filter", "prefix"}
FIELDS = {
    ToolImport.Kind.MCP: COMMON_FIELDS
    | {"command", "env", "cwd", "headers", "timeout"},
    ToolImport.Kind.OPENAPI: COMMON_FIELDS | {"spec", "path", "allow_private_network"},
}
MODELS: dict[str, type[pydantic.BaseModel]] = {
    ToolImport.Kind.MCP: McpServer,
    ToolImport.Kind.OPENAPI: OpenApiSpec,
}
SOURCE_FIELDS = ("command", "url", "spec", "path")


class ImportUnavailable(APIException):
    status_code = status.HTTP_502_BAD_GATEWAY
    default_detail = "The import's server or spec could not be read."
    default_code = "import_unavailable"


class ImportCreateSerializer(serializers.Serializer):
    """A registration: `kind`, `name`, and the fields of that kind."""

    kind = serializers.ChoiceField(choices=ToolImport.Kind.choices)
    name = serializers.CharField(max_length=63)
    enabled = serializers.BooleanField(default=True)
    url = serializers.CharField(
        required=False, help_text="MCP: streamable HTTP endpoint. OpenAPI: the spec."
    )
    tool_filter = serializers.ListField(
        child=serializers.CharField(), required=False, allow_null=True
    )
    prefix = serializers.CharField(
        required=False, allow_blank=True, allow_null=True, help_text="Default: name."
    )
    command = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="MCP over stdio."
    )
    env = serializers.DictField(
        child=serializers.CharField(allow_blank=True), required=False, write_only=True
    )
    cwd = serializers.CharField(required=False)
    headers = serializers.DictField(
        child=serializers.CharField(allow_blank=True), required=False, write_only=True
    )
    timeout = serializers.FloatField(required=False)
    spec = serializers.CharField(
        required=False, write_only=True, trim_whitespace=False, help_text="Inline."
    )
    path = serializers.CharField(required=False, help_text="A spec file here.")
    allow_private_network = serializers.BooleanField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        kind = attrs["kind"]
        fields = {k: v for k, v in attrs.items() if k not in ("kind", "enabled")}
        wrong = {
            key: [f"Not a field of a {kind} import."]
            for key in fields
            if key not in FIELDS[kind]
        }
        if wrong:
            raise ValidationError(wrong)
        try:
            attrs["registration"] = MODELS[kind](**fields)
        except pydantic.ValidationError as exc:
            raise ValidationError(field_errors(exc)) from None
        return attrs


def field_errors(exc: pydantic.ValidationError) -> dict[str, list[str]]:
    """pydantic's errors as DRF field errors (never with the values given)."""
    errors: dict[str, list[str]] = {}
    for error in exc.errors(include_input=False, include_url=False):
        key = str(error["loc"][0]) if error["loc"] else "non_field_errors"
        message = str(error["msg"]).removeprefix("Value error, ")
        errors.setdefault(key, []).append(message[:1].upper() + message[1:] + ".")
    return errors


class ImportToolSerializer(serializers.Serializer):
    full_name = serializers.CharField()
    missing = serializers.BooleanField()


class ImportSerializer(serializers.ModelSerializer):
    """A stored import, without its secrets."""

    toolset = serializers.SlugRelatedField(slug_field="name", read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    origin = serializers.SerializerMethodField()
    registration = serializers.SerializerMethodField()
    tools = serializers.SerializerMethodField()

    class Meta:
        model = ToolImport
        fields = [
            "id",
            "name",
            "kind",
            "enabled",
            "origin",
            "registration",
            "toolset",
            "tools",
            "created_by",
            "created_at",
            "updated_at",
            "last_refreshed_at",
            "last_error",
        ]
        read_only_fields = fields

    def get_origin(self, row: ToolImport) -> str:
        return shown_of_row(row)[0]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_registration(self, row: ToolImport) -> dict[str, Any]:
        return shown_of_row(row)[1]

    @extend_schema_field(ImportToolSerializer(many=True))
    def get_tools(self, row: ToolImport) -> list[dict[str, Any]]:
        if row.toolset is None:
            return []
        tools = sorted(row.toolset.tools.all(), key=lambda tool: tool.full_name)
        return [{"full_name": t.full_name, "missing": t.missing} for t in tools]


class ImportViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Imported MCP servers and OpenAPI specs. Staff only."""

    serializer_class = ImportSerializer
    permission_classes = [permissions.IsAdminUser]
    lookup_value_converter = ID_CONVERTER
    queryset = ToolImport.objects.select_related(
        "toolset", "created_by"
    ).prefetch_related("toolset__tools")

    @extend_schema(request=ImportCreateSerializer, responses={201: ImportSerializer})
    def create(self, request: Request) -> Response:
        """Register an import: read its server or spec, then catalog its tools."""
        given = ImportCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        try:
            row = register_import(
                registration=data["registration"],
                created_by=request.user,
                enabled=data["enabled"],
            )
        except ImportNameTaken as exc:
            raise ValidationError({"name": [str(exc)]}) from None
        except ImportFailed as exc:
            field = next((f for f in SOURCE_FIELDS if data.get(f)), "non_field_errors")
            raise ValidationError({field: [str(exc)]}) from None
        body = ImportSerializer(row, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=None,
        responses={
            200: ImportSerializer,
            502: OpenApiResponse(description="The server or spec could not be read."),
        },
    )
    @action(detail=True, methods=["post"])
    def refresh(self, request: Request, pk: str) -> Response:
        """Re-read the server or spec: new tools appear, vanished ones go missing."""
        row = self.get_object()
        try:
            refresh_import(row=row)
        except ImportFailed as exc:
            raise ImportUnavailable(str(exc)) from None
        row = self.get_queryset().get(pk=row.pk)
        return Response(ImportSerializer(row).data)

    def perform_destroy(self, instance: ToolImport) -> None:
        delete_import(row=instance)
