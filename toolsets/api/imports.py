"""Imports over REST (staff only): register an MCP server, an OpenAPI spec or a remote
A2A agent (by its card's URL), list, refresh, delete, and approve what each tool
declares (toolsets.reviews). Secrets of a registration (env, headers, a spec's
text, a command's arguments, a URL's user or query, an A2A agent's token) are
accepted, never returned.

The Tool servers page (/staff/tool-servers/) is built on this API only.
"""

import shlex
from typing import Any

import pydantic
from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from agents.changes import ActorFromRequest
from agents.client_input import ID_CONVERTER
from toolsets import reviews
from toolsets.declarations import digest_of
from toolsets.import_registry import (
    ImportNameTaken,
    Refreshed,
    delete_import,
    refresh_import,
    register_import,
)
from toolsets.imports.registrations import (
    A2AAgent,
    ImportFailed,
    McpServer,
    OpenApiSpec,
)
from toolsets.imports.stored import shown_of_row
from toolsets.models import Tool, ToolImport

COMMON_FIELDS = {"name", "url", "tool_filter", "prefix"}
FIELDS = {
    ToolImport.Kind.MCP: COMMON_FIELDS
    | {"command", "env", "cwd", "headers", "oauth", "timeout"},
    ToolImport.Kind.OPENAPI: COMMON_FIELDS | {"spec", "path", "allow_private_network"},
    ToolImport.Kind.A2A: {"name", "url", "token", "token_header", "timeout"},
}
MODELS: dict[str, type[pydantic.BaseModel]] = {
    ToolImport.Kind.MCP: McpServer,
    ToolImport.Kind.OPENAPI: OpenApiSpec,
    ToolImport.Kind.A2A: A2AAgent,
}
SOURCE_FIELDS = ("command", "command_line", "url", "spec", "spec_file", "path")


def _source_field(given: Any) -> str:
    """The field that named the server or spec that failed: its error goes there."""
    return next((f for f in SOURCE_FIELDS if given.get(f)), "non_field_errors")


class ImportUnavailable(APIException):
    status_code = status.HTTP_502_BAD_GATEWAY
    default_detail = "The import's server or spec could not be read."
    default_code = "import_unavailable"


class OAuthSerializer(serializers.Serializer):
    """OAuth 2 client credentials of a streamable HTTP MCP server."""

    client_id = serializers.CharField()
    client_secret = serializers.CharField(write_only=True)
    issuer = serializers.CharField(
        help_text="The authorization server's issuer URL: the MCP server must name "
        "this one."
    )
    scope = serializers.CharField(required=False, allow_blank=True)


class ImportCreateSerializer(serializers.Serializer):
    """A registration: `kind`, `name`, and the fields of that kind."""

    kind = serializers.ChoiceField(choices=ToolImport.Kind.choices)
    name = serializers.CharField(max_length=63)
    enabled = serializers.BooleanField(default=True)
    url = serializers.CharField(
        required=False,
        help_text="MCP: streamable HTTP endpoint. OpenAPI: the spec. A2A: the "
        "agent card (…/.well-known/agent-card.json).",
    )
    token = serializers.CharField(
        required=False,
        write_only=True,
        help_text="A2A: the credential its endpoint takes, sealed and never shown "
        "again; sent as `Authorization: Bearer <token>`, or in `token_header`.",
    )
    token_header = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="A2A: the API-key header the token goes in; blank: Authorization.",
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
    oauth = OAuthSerializer(
        required=False,
        write_only=True,
        help_text="MCP over HTTP: OAuth client credentials; the secret is sealed and "
        "never shown again.",
    )
    timeout = serializers.FloatField(required=False)
    spec = serializers.CharField(
        required=False, write_only=True, trim_whitespace=False, help_text="Inline."
    )
    path = serializers.CharField(required=False, help_text="A spec file here.")
    allow_private_network = serializers.BooleanField(required=False)
    command_line = serializers.CharField(
        required=False,
        write_only=True,
        help_text="MCP over stdio: the command as one line (shell quoting, no "
        "shell); instead of `command`.",
    )
    spec_file = serializers.FileField(
        required=False,
        write_only=True,
        help_text="OpenAPI: the spec uploaded (multipart); instead of `spec`.",
    )
    approve_tools = serializers.BooleanField(
        default=False,
        help_text="Approve every tool as read now. Default: each tool is held, "
        "offered to nobody, until staff approve it.",
    )

    def validate_command_line(self, value: str) -> list[str]:
        try:
            words = shlex.split(value)
        except ValueError as exc:
            raise ValidationError(f"The command cannot be read: {exc}.") from None
        if not words:
            raise ValidationError("Give the program to run.")
        return words

    def validate_spec_file(self, value) -> str:
        limit = int(settings.TOOLCRIB_IMPORT_MAX_SPEC_BYTES)
        if value.size > limit:
            raise ValidationError(f"The file is larger than {limit} bytes.")
        try:
            return value.read().decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError("The file is not UTF-8 text.") from None

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        kind = attrs["kind"]
        _merge_alternative(attrs, "command_line", "command")
        _merge_alternative(attrs, "spec_file", "spec")
        unused = ("kind", "enabled", "approve_tools")
        fields = {k: v for k, v in attrs.items() if k not in unused}
        wrong = {
            key: [f"Not a field of a {kind} import."]
            for key in fields
            if key not in FIELDS[kind]
        }
        if wrong:
            raise ValidationError(wrong)
        if "oauth" in fields and not fields.get("url"):
            raise ValidationError(
                {"oauth": ["OAuth is for a server at a URL (Streamable HTTP)."]}
            )
        try:
            attrs["registration"] = MODELS[kind](**fields)
        except pydantic.ValidationError as exc:
            raise ValidationError(field_errors(exc)) from None
        return attrs


def _merge_alternative(attrs: dict[str, Any], alternative: str, field: str) -> None:
    """Take `alternative` (a command line, an uploaded spec) as `field`."""
    if alternative not in attrs:
        return
    if field in attrs:
        raise ValidationError(
            {alternative: [f"Give {alternative} or {field}, not both."]}
        )
    attrs[field] = attrs.pop(alternative)


def field_errors(exc: pydantic.ValidationError) -> dict[str, list[str]]:
    """pydantic's errors as DRF field errors (never with the values given)."""
    errors: dict[str, list[str]] = {}
    for error in exc.errors(include_input=False, include_url=False):
        key = str(error["loc"][0]) if error["loc"] else "non_field_errors"
        message = str(error["msg"]).removeprefix("Value error, ")
        errors.setdefault(key, []).append(message[:1].upper() + message[1:] + ".")
    return errors


class ImportToolSerializer(serializers.ModelSerializer):
    """A tool of an import: what it declares now, what staff approved, and its
    governance (changed with PATCH /api/tools/{full_name}/)."""

    review = serializers.SerializerMethodField(
        help_text="new (never approved), changed (its description or schema differ "
        "from the approved ones) or approved. Only approved tools are offered."
    )
    digest = serializers.SerializerMethodField(
        help_text="Of the description and schema now: send it back to approve them."
    )
    approver_group = serializers.SlugRelatedField(slug_field="name", read_only=True)
    approved_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Tool
        fields = [
            "full_name",
            "name",
            "description",
            "parameters",
            "review",
            "digest",
            "approved_description",
            "approved_parameters",
            "approved_by",
            "approved_at",
            "risk",
            "enabled",
            "missing",
            "requires_approval",
            "approver_group",
            "approvals_required",
        ]
        read_only_fields = fields

    def get_review(self, tool: Tool) -> str:
        return reviews.state_of(tool)

    def get_digest(self, tool: Tool) -> str:
        return digest_of(tool.description, tool.parameters)


class ChangedToolSerializer(serializers.Serializer):
    full_name = serializers.CharField()
    description_changed = serializers.BooleanField()
    parameters_changed = serializers.BooleanField()


class ChangesSerializer(serializers.Serializer):
    """What a refresh found."""

    added = serializers.ListField(child=serializers.CharField(), source="created")
    removed = serializers.ListField(child=serializers.CharField(), source="missing")
    changed = ChangedToolSerializer(many=True)


class ApproveSerializer(serializers.Serializer):
    """`{"tool": full name, "digest": of what the page showed}`."""

    tool = serializers.CharField(help_text="`<toolset>.<tool>`, of this import.")
    digest = serializers.CharField(
        help_text="The tool's `digest` as shown: approving fails if the server "
        "changed it again since."
    )


class ImportSerializer(serializers.ModelSerializer):
    """A stored import, without its secrets."""

    toolset = serializers.SlugRelatedField(slug_field="name", read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    origin = serializers.SerializerMethodField()
    registration = serializers.SerializerMethodField()
    tools = serializers.SerializerMethodField()
    card = serializers.SerializerMethodField(
        help_text="A2A: the agent card as last read (name, description, endpoint, "
        "skills); null for other kinds."
    )

    class Meta:
        model = ToolImport
        fields = [
            "id",
            "name",
            "kind",
            "enabled",
            "origin",
            "registration",
            "card",
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

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_card(self, row: ToolImport) -> dict[str, Any] | None:
        if row.kind != ToolImport.Kind.A2A:
            return None
        card = row.document or {}
        skills = [
            {key: skill.get(key) for key in ("id", "name", "description", "tags")}
            for skill in card.get("skills") or []
            if isinstance(skill, dict)
        ]
        shown = ("name", "description", "url", "version", "protocolVersion")
        return {**{key: card.get(key) for key in shown}, "skills": skills}

    @extend_schema_field(ImportToolSerializer(many=True))
    def get_tools(self, row: ToolImport) -> list[dict[str, Any]]:
        if row.toolset is None:
            return []
        tools = sorted(row.toolset.tools.all(), key=lambda tool: tool.full_name)
        return ImportToolSerializer(tools, many=True).data


class RefreshSerializer(ImportSerializer):
    """An import after a refresh, with what the refresh found."""

    changes = serializers.SerializerMethodField()

    class Meta(ImportSerializer.Meta):
        fields = [*ImportSerializer.Meta.fields, "changes"]
        read_only_fields = fields

    @extend_schema_field(ChangesSerializer)
    def get_changes(self, row: ToolImport) -> dict[str, Any]:
        return ChangesSerializer(self.context["refreshed"]).data


class ImportViewSet(
    ActorFromRequest,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Imported MCP servers, OpenAPI specs and remote A2A agents. Staff only."""

    serializer_class = ImportSerializer
    permission_classes = [permissions.IsAdminUser]
    lookup_value_converter = ID_CONVERTER
    queryset = ToolImport.objects.select_related(
        "toolset", "created_by"
    ).prefetch_related("toolset__tools__approver_group", "toolset__tools__approved_by")

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
                approve_tools=data["approve_tools"],
            )
        except ImportNameTaken as exc:
            raise ValidationError({"name": [str(exc)]}) from None
        except ImportFailed as exc:
            field = _source_field(request.data)
            raise ValidationError({field: [str(exc)]}) from None
        body = self._body(row)
        return Response(body, status=status.HTTP_201_CREATED)

    def _body(self, row: ToolImport) -> dict[str, Any]:
        row = self.get_queryset().get(pk=row.pk)
        return ImportSerializer(row, context=self.get_serializer_context()).data

    @extend_schema(
        request=None,
        responses={
            200: RefreshSerializer,
            502: OpenApiResponse(description="The server or spec could not be read."),
        },
    )
    @action(detail=True, methods=["post"])
    def refresh(self, request: Request, pk: str) -> Response:
        """Re-read the server or spec: new tools appear (held for review), vanished
        ones go missing, changed ones are held until approved again; `changes`
        says which."""
        row = self.get_object()
        try:
            refreshed: Refreshed = refresh_import(row=row, by=request.user)
        except ImportFailed as exc:
            raise ImportUnavailable(str(exc)) from None
        row = self.get_queryset().get(pk=row.pk)
        context = {**self.get_serializer_context(), "refreshed": refreshed}
        return Response(RefreshSerializer(row, context=context).data)

    @extend_schema(request=ApproveSerializer, responses={200: ImportSerializer})
    @action(detail=True, methods=["post"])
    def approve(self, request: Request, pk: str) -> Response:
        """Approve what one tool declares now (its description and schema, as the
        `digest` given): it is offered again to whom access allows."""
        given = ApproveSerializer(data=request.data)  # the body first: 400 if bad
        given.is_valid(raise_exception=True)
        row = self.get_object()
        tool = Tool.objects.filter(
            toolset=row.toolset_id, full_name=given.validated_data["tool"]
        ).first()
        if tool is None or row.toolset_id is None:
            raise ValidationError({"tool": ["No tool of this import by that name."]})
        if (
            digest_of(tool.description, tool.parameters)
            != given.validated_data["digest"]
        ):
            raise ValidationError(
                {"digest": ["The tool changed again since you looked: review it anew."]}
            )
        reviews.approve_tool(tool=tool, by=request.user)
        return Response(self._body(row))

    def perform_destroy(self, instance: ToolImport) -> None:
        delete_import(row=instance)
