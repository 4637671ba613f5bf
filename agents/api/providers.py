"""Model connections over the API, for staff: /api/providers/.

A stored connection is added, read, changed, tested and removed here; the
environment's providers (TOOLCRIB_PROVIDER_ENV) are listed beside them, marked
read-only (their models and prices may still be listed). A key is write-only:
`api_key` is taken on a write and never returned (`has_key` says whether one is
stored). Agents name a connection's model `<connection>/<model>` (docs/models.md).

    GET/POST          /api/providers/
    GET/PATCH/DELETE  /api/providers/{name}/
    POST              /api/providers/{name}/test/          one real call
    GET/POST          /api/providers/{name}/models/        listed; add one by hand
    POST              /api/providers/{name}/models/fetch/  ask the provider
    PATCH/DELETE      /api/providers/{name}/models/{id}/   prices; remove
"""

from urllib.parse import urlsplit

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from agents import connections
from agents.changes import ActorFromRequest, record
from agents.connections import EnvConnection
from agents.models import ModelConnection, ServedModel
from agents.params import NAME_CONVERTER

Kind = ModelConnection.Kind
NEEDS_BASE = (Kind.OPENAI_COMPATIBLE, Kind.OLLAMA)
NEEDS_KEY = (Kind.GEMINI, Kind.ANTHROPIC)
PRICE = {
    "max_digits": 12,
    "decimal_places": 6,
    "min_value": 0,
    "required": False,
    "allow_null": True,
}


class ServedModelSerializer(serializers.ModelSerializer):
    """A model a connection serves, and its prices per million tokens."""

    input_price = serializers.DecimalField(
        **PRICE, help_text="Price per million input (prompt) tokens."
    )
    output_price = serializers.DecimalField(
        **PRICE, help_text="Price per million output (completion) tokens."
    )

    class Meta:
        model = ServedModel
        fields = ["id", "model", "full_name", "input_price", "output_price"]
        read_only_fields = ["full_name"]
        extra_kwargs = {"model": {"validators": []}}

    def validate_model(self, value: str) -> str:
        value = value.strip()
        if not value or any(c.isspace() for c in value):
            raise ValidationError("A model id, without spaces.")
        return value


class ConnectionSerializer(serializers.ModelSerializer):
    """A model connection; its key is taken, never given back."""

    api_key = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        max_length=4000,
        style={"input_type": "password"},
        help_text="Write-only. Omitted on a change: the stored key stays; "
        "blank: removed.",
    )
    has_key = serializers.SerializerMethodField()
    read_only = serializers.SerializerMethodField()
    variables = serializers.SerializerMethodField()
    models = ServedModelSerializer(many=True, read_only=True)
    base_url = serializers.CharField(max_length=500, required=False, allow_blank=True)

    class Meta:
        model = ModelConnection
        fields = [
            "name",
            "kind",
            "base_url",
            "litellm_provider",
            "granted_only",
            "api_key",
            "has_key",
            "read_only",
            "variables",
            "models",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["created_at", "updated_at"]

    def get_has_key(self, connection: ModelConnection) -> bool:
        return bool(connection.sealed_key)

    def get_read_only(self, connection: ModelConnection) -> bool:
        return False

    def get_variables(self, connection: ModelConnection) -> list[str]:
        """The environment variables an environment provider is read from."""
        return []

    def validate_name(self, value: str) -> str:
        value = value.strip().lower()
        if value in connections.RESERVED_NAMES:
            raise ValidationError(
                f"{value} is a provider's own prefix: choose another name."
            )
        return value

    def validate_base_url(self, value: str) -> str:
        value = value.strip()
        if not value:
            return value
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValidationError("A URL starting with http:// or https://.")
        return value.rstrip("/")

    def validate_litellm_provider(self, value: str) -> str:
        value = value.strip().lower()
        if value and not value.replace("_", "").isalnum():
            raise ValidationError("LiteLLM's provider prefix: letters, digits, _.")
        if value and not connections.is_litellm_provider(value):
            raise ValidationError(
                f"LiteLLM has no provider named {value}: use its prefix as LiteLLM's "
                "documentation gives it (groq, bedrock, mistral...)."
            )
        return value

    def validate(self, attrs):
        kind = attrs.get("kind", getattr(self.instance, "kind", None))
        base = attrs.get("base_url", getattr(self.instance, "base_url", ""))
        provider = attrs.get(
            "litellm_provider", getattr(self.instance, "litellm_provider", "")
        )
        key = attrs.get("api_key")
        has_key = bool(getattr(self.instance, "sealed_key", "")) if key is None else key
        errors = {}
        if kind in NEEDS_BASE and not base:
            errors["base_url"] = ["This kind of connection needs its server's URL."]
        if kind in NEEDS_KEY and not has_key:
            errors["api_key"] = ["This provider needs an API key."]
        if kind == Kind.LITELLM and not provider:
            errors["litellm_provider"] = ["Name LiteLLM's provider (groq, bedrock...)."]
        if errors:
            raise ValidationError(errors)
        return attrs


class EnvConnectionSerializer(serializers.Serializer):
    """An environment provider, shown as a read-only connection."""

    name = serializers.CharField()
    kind = serializers.CharField()
    base_url = serializers.CharField()
    has_key = serializers.BooleanField()
    read_only = serializers.BooleanField()
    variables = serializers.ListField(child=serializers.CharField())
    models = ServedModelSerializer(many=True)


class TestRequestSerializer(serializers.Serializer):
    model = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="The model to call; else the first listed.",
    )


class TestResultSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    message = serializers.CharField(help_text="What happened, in plain words.")
    model = serializers.CharField()


class IsStaff(permissions.BasePermission):
    """Staff only: anyone else is refused (403) before anything is read."""

    def has_permission(self, request: Request, view) -> bool:
        return bool(request.user and request.user.is_staff)


class ProviderViewSet(ActorFromRequest, viewsets.GenericViewSet):
    """Model connections: staff add, change, test and remove them."""

    serializer_class = ConnectionSerializer
    permission_classes = [permissions.IsAuthenticated, IsStaff]
    lookup_field = "name"
    lookup_value_converter = NAME_CONVERTER
    queryset = ModelConnection.objects.prefetch_related("models")

    def _owner(self, name: str) -> ModelConnection | EnvConnection:
        found = connections.env_connection(name)
        if found is not None:
            return found
        return get_object_or_404(self.get_queryset(), name=name)

    def _stored(self, name: str) -> ModelConnection:
        if connections.env_connection(name) is not None:
            raise ValidationError(
                {
                    "detail": "This connection comes from the server's environment: "
                    "change its variables and restart to change it."
                }
            )
        return get_object_or_404(self.get_queryset(), name=name)

    def _out(self, owner: ModelConnection | EnvConnection) -> dict:
        if isinstance(owner, EnvConnection):
            return EnvConnectionSerializer(owner).data
        return ConnectionSerializer(owner).data

    @extend_schema(responses=ConnectionSerializer(many=True))
    def list(self, request: Request) -> Response:
        """The environment's providers (read-only), then the stored connections."""
        env = [self._out(c) for c in connections.env_connections()]
        return Response(env + [self._out(c) for c in self.get_queryset()])

    @extend_schema(responses={201: ConnectionSerializer})
    def create(self, request: Request) -> Response:
        serializer = ConnectionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        key = data.pop("api_key", None)
        if ModelConnection.objects.filter(name=data["name"]).exists():
            raise ValidationError({"name": ["A connection has this name already."]})
        connection = connections.save_connection(connection=None, fields=data, key=key)
        return Response(self._out(connection), status=status.HTTP_201_CREATED)

    @extend_schema(responses=ConnectionSerializer)
    def retrieve(self, request: Request, name: str) -> Response:
        return Response(self._out(self._owner(name)))

    @extend_schema(responses=ConnectionSerializer)
    def partial_update(self, request: Request, name: str) -> Response:
        request.data  # noqa: B018 - the body first: a bad one is a 400, whatever the name
        connection = self._stored(name)
        serializer = ConnectionSerializer(connection, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        key = data.pop("api_key", None)
        new_name = data.get("name", connection.name)
        if ModelConnection.objects.filter(name=new_name).exclude(pk=connection.pk):
            raise ValidationError({"name": ["A connection has this name already."]})
        connection = connections.save_connection(
            connection=connection, fields=data, key=key
        )
        if key is not None:
            record(
                request.user, connection, "key changed" if key else "key removed", {}
            )
        return Response(self._out(self.get_queryset().get(pk=connection.pk)))

    def destroy(self, request: Request, name: str) -> Response:
        connections.remove_connection(self._stored(name))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=TestRequestSerializer, responses=TestResultSerializer)
    @action(detail=True, methods=["post"])
    def test(self, request: Request, name: str) -> Response:
        """Make one real call to the provider; say what failed in plain words."""
        asked = TestRequestSerializer(data=request.data)  # the body first: 400 if bad
        asked.is_valid(raise_exception=True)
        owner = self._owner(name)
        result = connections.test_connection(
            owner, model=asked.validated_data.get("model", "").strip()
        )
        if isinstance(owner, ModelConnection):
            detail = {"ok": result.ok, "message": result.message, "model": result.model}
            record(request.user, owner, "tested", detail)
        return Response(TestResultSerializer(result).data)

    @extend_schema(
        methods=["GET"], request=None, responses=ServedModelSerializer(many=True)
    )
    @extend_schema(
        methods=["POST"],
        request=ServedModelSerializer,
        responses={201: ServedModelSerializer},
    )
    @action(detail=True, methods=["get", "post"])
    def models(self, request: Request, name: str) -> Response:
        """The models a connection serves; POST adds one by hand, with prices."""
        if request.method == "POST":
            request.data  # noqa: B018 - the body first: a bad one is a 400
        owner = self._owner(name)
        if request.method == "GET":
            rows = connections.models_of(owner)
            return Response(ServedModelSerializer(rows, many=True).data)
        serializer = ServedModelSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        served = connections.save_model(owner=owner, **serializer.validated_data)
        return Response(
            ServedModelSerializer(served).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(request=None, responses=ServedModelSerializer(many=True))
    @action(detail=True, methods=["post"], url_path="models/fetch")
    def fetch_models(self, request: Request, name: str) -> Response:
        """Ask the provider which models it serves, and list the new ones."""
        owner = self._owner(name)
        rows = connections.fetch_models(owner)
        return Response(ServedModelSerializer(rows, many=True).data)

    @extend_schema(
        methods=["PATCH"],
        request=ServedModelSerializer,
        responses=ServedModelSerializer,
    )
    @extend_schema(methods=["DELETE"], request=None, responses={204: None})
    @action(
        detail=True,
        methods=["patch", "delete"],
        url_path="models/<id:model_id>",
    )
    def model(self, request: Request, name: str, model_id: int) -> Response:
        """Change a listed model's prices, or remove it from the list."""
        if request.method == "PATCH":
            request.data  # noqa: B018 - the body first: a bad one is a 400
        owner = self._owner(name)
        served = next(
            (m for m in connections.models_of(owner) if m.pk == model_id), None
        )
        if served is None:
            raise NotFound("No such model on this connection.")
        if request.method == "DELETE":
            connections.remove_model(served)
            return Response(status=status.HTTP_204_NO_CONTENT)
        serializer = ServedModelSerializer(served, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        served = connections.save_model(
            owner=owner,
            served=served,
            model=data.get("model", served.model),
            input_price=data.get("input_price", served.input_price),
            output_price=data.get("output_price", served.output_price),
        )
        return Response(ServedModelSerializer(served).data)
