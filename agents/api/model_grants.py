"""Model grants over the API: staff allow or deny a model to a user or a group.

`/api/model-grants/`: list, create, read, change (PATCH) and delete, staff only
(anyone else: 403). Every change goes through agents.model_grants (the version
row bumped in its transaction) and is in the change audit (`agents.modelgrant`).
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils import timezone
from rest_framework import permissions, serializers, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from agents import model_grants
from agents.api.providers import IsStaff
from agents.changes import ActorFromRequest
from agents.connections import unknown_model
from agents.models import ModelGrant
from agents.params import ID_CONVERTER


class ModelGrantSerializer(serializers.ModelSerializer):
    """`{"user"|"group": name, "model": name or "<connection>/*", "effect",
    "expires_at"?}`: one grant per subject and model."""

    user = serializers.SlugRelatedField(
        slug_field="username",
        queryset=get_user_model().objects.all(),
        required=False,
        allow_null=True,
        help_text="A username (or a group, never both).",
    )
    group = serializers.SlugRelatedField(
        slug_field="name",
        queryset=Group.objects.all(),
        required=False,
        allow_null=True,
        help_text="A group name (or a user, never both).",
    )
    model = serializers.CharField(
        max_length=260,
        help_text="As agents name it (openai/gpt-4o-mini, lab/llama3), or "
        "<connection>/* for every model of a connection or provider.",
    )
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    active = serializers.SerializerMethodField(help_text="Not expired: it decides now.")

    class Meta:
        model = ModelGrant
        fields = [
            "id",
            "user",
            "group",
            "model",
            "effect",
            "expires_at",
            "active",
            "created_by",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["created_at", "updated_at"]
        # One grant per subject and model is checked in validate(), in words.
        validators = []

    def get_active(self, grant: ModelGrant) -> bool:
        return grant.expires_at is None or grant.expires_at > timezone.now()

    def validate_model(self, value: str) -> str:
        value = value.strip()
        why = unknown_model(value)
        if why:
            raise ValidationError(why)
        return value

    def validate_expires_at(self, value):
        if value is not None and value <= timezone.now():
            raise ValidationError("Must be in the future.")
        return value

    def validate(self, attrs: dict) -> dict:
        instance = self.instance
        user = attrs.get("user", getattr(instance, "user", None))
        group = attrs.get("group", getattr(instance, "group", None))
        if "user" in attrs and attrs["user"] is not None and "group" not in attrs:
            group = None  # a PATCH to a user moves the grant off its group
        if "group" in attrs and attrs["group"] is not None and "user" not in attrs:
            user = None
        if (user is None) == (group is None):
            raise ValidationError({"user": ["Set either a user or a group, not both."]})
        attrs["user"], attrs["group"] = user, group
        model = attrs.get("model", getattr(instance, "model", ""))
        others = ModelGrant.objects.exclude(pk=getattr(instance, "pk", None)).filter(
            model=model
        )
        if user is not None and others.filter(user=user).exists():
            raise ValidationError(
                {"model": [f"User {user.username} already has a grant on {model}."]}
            )
        if group is not None and others.filter(group=group).exists():
            raise ValidationError(
                {"model": [f"Group {group.name} already has a grant on {model}."]}
            )
        return attrs


class ModelGrantViewSet(ActorFromRequest, viewsets.ModelViewSet):
    """Who may use which model (docs/models.md, "Model grants"). Staff only."""

    serializer_class = ModelGrantSerializer
    permission_classes = [permissions.IsAuthenticated, IsStaff]
    lookup_value_converter = ID_CONVERTER
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_queryset(self):
        return ModelGrant.objects.select_related("user", "group", "created_by")

    def perform_create(self, serializer) -> None:
        data = serializer.validated_data
        grant, _ = model_grants.grant_model(
            model=data["model"],
            effect=data["effect"],
            user=data["user"],
            group=data["group"],
            expires_at=data.get("expires_at"),
            created_by=self.request.user,
        )
        serializer.instance = grant

    def update(self, request: Request, *args, **kwargs) -> Response:
        request.data  # noqa: B018 - the body first: a bad one is a 400, whatever the id
        return super().update(request, *args, **kwargs)

    def perform_update(self, serializer) -> None:
        serializer.instance = model_grants.update_grant(
            grant=serializer.instance, changes=dict(serializer.validated_data)
        )

    def perform_destroy(self, instance) -> None:
        model_grants.revoke_grant(grant=instance)
