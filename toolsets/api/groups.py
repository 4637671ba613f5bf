"""Groups for staff: `/api/groups/` (create, rename, delete, members). Everyone
else gets 403, as for grants. Users are toolsets/api/users.py's."""

from typing import Annotated

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import QuerySet
from django.utils.translation import gettext as _
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
)
from pydantic import AfterValidator, Field
from rest_framework import permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from agents.changes import ActorFromRequest
from agents.client_input import (
    ID_CONVERTER,
    NAME_CONVERTER,
    ClientInput,
    StoredText,
    validated,
)
from project.errors import NotFoundError
from toolsets import groups
from toolsets.models import ProviderIdentity

DEFAULT_USERS = 100
MAX_USERS = 1000


def _plain_name(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("A group's name cannot be blank.")
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise ValueError("A group's name holds no control characters.")
    return value


class GroupInput(ClientInput):
    """A group's name, to create a group or rename one."""

    name: Annotated[
        StoredText, Field(max_length=groups.NAME_MAX), AfterValidator(_plain_name)
    ]


class MemberInput(ClientInput):
    """The user to put in a group, by username."""

    username: Annotated[StoredText, Field(min_length=1, max_length=150)]


class GroupSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    member_count = serializers.IntegerField()
    managed_by_provider = serializers.SerializerMethodField(
        help_text="The sign-in provider sets its members at each of their sign-ins: "
        "a member added here leaves again at her next sign-in if the provider "
        "does not name the group for her."
    )

    def get_managed_by_provider(self, group: Group) -> bool:
        return groups.is_provider_managed(group.name)


class MemberSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class GroupDetailSerializer(GroupSerializer):
    members = MemberSerializer(many=True, source="member_list")


class IdentityInput(ClientInput):
    """The provider's subject (`sub`) to link a user to."""

    subject: Annotated[StoredText, Field(min_length=1, max_length=255)]


class IdentitySerializer(serializers.Serializer):
    issuer = serializers.CharField()
    subject = serializers.CharField(help_text="The provider's `sub` for her.")
    linked_by = serializers.ChoiceField(
        choices=ProviderIdentity.LinkedBy.choices,
        help_text="created: her first sign-in made the user; user: she linked it, "
        "signed in; staff: staff linked it; name: linked by name before links "
        "were made by subject only (review these).",
    )
    created_at = serializers.DateTimeField()
    last_sign_in_at = serializers.DateTimeField(allow_null=True)


def _detail(group: Group) -> dict:
    group.member_list = list(groups.members(group))
    group.member_count = len(group.member_list)
    return GroupDetailSerializer(group).data


class GroupViewSet(ActorFromRequest, viewsets.GenericViewSet):
    """Groups (staff only): list, create, rename, delete; members by username."""

    permission_classes = [permissions.IsAdminUser]
    serializer_class = GroupSerializer
    lookup_value_converter = ID_CONVERTER
    queryset = Group.objects.all()  # for the schema; get_queryset() counts members

    def get_queryset(self) -> QuerySet[Group]:
        return groups.groups_with_counts()

    @extend_schema(responses={200: GroupSerializer(many=True)})
    def list(self, request: Request) -> Response:
        """Every group by name, with its member count."""
        return Response(GroupSerializer(self.get_queryset(), many=True).data)

    @extend_schema(responses={200: GroupDetailSerializer})
    def retrieve(self, request: Request, pk: int) -> Response:
        """One group and its members."""
        return Response(_detail(self.get_object()))

    @extend_schema(request=GroupInput, responses={201: GroupDetailSerializer})
    def create(self, request: Request) -> Response:
        """Create a group; a name taken already (letter case aside) is a 400."""
        body = validated(GroupInput, request.data)
        group = groups.create_group(name=body.name)
        return Response(_detail(group), status=status.HTTP_201_CREATED)

    @extend_schema(request=GroupInput, responses={200: GroupDetailSerializer})
    def partial_update(self, request: Request, pk: int) -> Response:
        """Rename a group; its grants and members stay."""
        body = validated(GroupInput, request.data)
        group = groups.rename_group(group=self.get_object(), name=body.name)
        return Response(_detail(group))

    @extend_schema(responses={204: None})
    def destroy(self, request: Request, pk: int) -> Response:
        """Delete a group and its grants; its members' open sessions hear of it."""
        groups.delete_group(group=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        request=MemberInput,
        responses={
            201: GroupDetailSerializer,
            200: OpenApiResponse(
                GroupDetailSerializer, description="She was a member already."
            ),
        },
    )
    @action(detail=True, methods=["post"], url_path="members")
    def members(self, request: Request, pk: int) -> Response:
        """Put a user in the group, by username."""
        body = validated(MemberInput, request.data)
        group = self.get_object()
        user = groups.user_by_username(body.username)
        added = groups.add_member(group=group, user=user)
        code = status.HTTP_201_CREATED if added else status.HTTP_200_OK
        return Response(_detail(group), status=code)

    @extend_schema(responses={204: None})
    @action(
        detail=True,
        methods=["delete"],
        url_path=f"members/<{NAME_CONVERTER}:username>",
        url_name="member",
    )
    def member(self, request: Request, pk: int, username: str) -> Response:
        """Take a user out of the group."""
        group = self.get_object()
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise NotFoundError(
                _("No user is named %(username)r.") % {"username": username}
            )
        groups.remove_member(group=group, user=user)
        return Response(status=status.HTTP_204_NO_CONTENT)
