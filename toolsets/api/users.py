"""`/api/users/` and `/api/invites/` (staff only): people listed a page at a time,
created with a password or invited by a link, switched off and on, made staff.

Everyone else gets 403. A user is named by her username in the URL, as
`/api/users/{username}/identity/` always has. The rules of a change are
toolsets.people.users'; an invitation's are toolsets.people.invites'.
"""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
)
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from agents.changes import ActorFromRequest
from agents.client_input import (
    ID_CONVERTER,
    NAME_CONVERTER,
    JSONParser,
    validated,
    whole_number_param,
)
from toolsets.api.groups import IdentityInput, IdentitySerializer
from toolsets.models import Invite, ProviderIdentity
from toolsets.people import invites, users
from toolsets.sso import accounts

DEFAULT_USERS = 100
MAX_USERS = 1000
USER_FIELDS = ("username", "email", "first_name", "last_name")


class UserSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    full_name = serializers.CharField(source="get_full_name")
    first_name = serializers.CharField()
    last_name = serializers.CharField()
    email = serializers.CharField()
    is_staff = serializers.BooleanField()
    is_active = serializers.BooleanField()
    is_superuser = serializers.BooleanField()
    date_joined = serializers.DateTimeField()
    last_login = serializers.DateTimeField(allow_null=True)
    single_sign_on = serializers.BooleanField(
        help_text="She signs in through the OpenID Connect provider."
    )
    source = serializers.SerializerMethodField(
        help_text="Where her account comes from: `password` (made here), or the "
        "sign-in provider's name."
    )
    provider_fields = serializers.SerializerMethodField(
        help_text="Her fields the sign-in provider sets at each sign-in: not "
        "editable here (a PATCH of one is a 400)."
    )
    groups = serializers.SerializerMethodField(help_text="Her groups' names.")

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_groups(self, user) -> list[str]:
        return sorted(group.name for group in user.groups.all())

    def get_source(self, user) -> str:
        if user.single_sign_on:
            return settings.TOOLCRIB_OIDC_PROVIDER_NAME
        return "password"

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_provider_fields(self, user) -> list[str]:
        return users.provider_fields(user=user, linked=user.single_sign_on)


def _group_names(names: list[str]) -> list[Group]:
    found = {group.name: group for group in Group.objects.filter(name__in=names)}
    missing = sorted(set(names) - set(found))
    if missing:
        raise serializers.ValidationError(f"No group is named {missing[0]!r}.")
    return [found[name] for name in dict.fromkeys(names)]


class NewUserSerializer(serializers.Serializer):
    """A user made by staff, with a password Django's validators accept."""

    username = serializers.RegexField(r"^[\w.@+-]+\Z", max_length=150)
    password = serializers.CharField(
        max_length=4096, trim_whitespace=False, write_only=True
    )
    email = serializers.EmailField(required=False, allow_blank=True, default="")
    first_name = serializers.CharField(
        required=False, allow_blank=True, max_length=150, default=""
    )
    last_name = serializers.CharField(
        required=False, allow_blank=True, max_length=150, default=""
    )
    is_staff = serializers.BooleanField(required=False, default=False)
    groups = serializers.ListField(
        child=serializers.CharField(max_length=150),
        required=False,
        default=list,
        max_length=100,
    )

    def validate_groups(self, names: list[str]) -> list[Group]:
        return _group_names(names)

    def validate(self, attrs: dict) -> dict:
        fields = {name: attrs.get(name, "") for name in USER_FIELDS}
        try:
            validate_password(attrs["password"], get_user_model()(**fields))
        except DjangoValidationError as exc:
            raise serializers.ValidationError(
                {"password": list(exc.messages)}
            ) from None
        return attrs


class UserChangeSerializer(serializers.Serializer):
    """What staff change of a user; anything else is refused."""

    is_active = serializers.BooleanField(required=False)
    is_staff = serializers.BooleanField(required=False)
    email = serializers.EmailField(required=False, allow_blank=True)
    first_name = serializers.CharField(required=False, allow_blank=True, max_length=150)
    last_name = serializers.CharField(required=False, allow_blank=True, max_length=150)

    def validate(self, attrs: dict) -> dict:
        unknown = sorted(set(self.initial_data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError(
                {unknown[0]: ["This field cannot be changed here."]}
            )
        return attrs


@extend_schema(
    parameters=[
        OpenApiParameter(
            "search", str, description="Part of a username, a name or an email."
        ),
        OpenApiParameter("group", str, description="Only members of this group."),
        OpenApiParameter(
            "after",
            str,
            description="The next page: the usernames after this one (the last "
            "of the page before).",
        ),
        OpenApiParameter(
            "limit", int, description=f"At most this many (default {DEFAULT_USERS})."
        ),
    ]
)
class UserViewSet(
    ActorFromRequest,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Users (staff only), by username: list, create, change; her groups and her
    link to the sign-in provider."""

    permission_classes = [permissions.IsAdminUser]
    serializer_class = UserSerializer
    lookup_field = "username"
    lookup_value_converter = NAME_CONVERTER
    queryset = get_user_model().objects.all()  # for the schema

    def get_queryset(self) -> QuerySet:
        found = (
            get_user_model()
            .objects.annotate(
                single_sign_on=Exists(
                    ProviderIdentity.objects.filter(user=OuterRef("pk"))
                )
            )
            .prefetch_related("groups")
            .order_by("username")
        )
        if self.action != "list":
            return found
        params = self.request.query_params
        search = params.get("search", "").strip()
        if search:
            found = found.filter(
                Q(username__icontains=search)
                | Q(first_name__icontains=search)
                | Q(last_name__icontains=search)
                | Q(email__icontains=search)
            )
        if params.get("group"):
            found = found.filter(groups__name=params["group"])
        if params.get("after"):
            found = found.filter(username__gt=params["after"])
        limit = whole_number_param(
            params, "limit", default=DEFAULT_USERS, minimum=1, maximum=MAX_USERS
        )
        return found[:limit]

    def _shown(self, username: str) -> dict:
        return UserSerializer(self.get_queryset().get(username=username)).data

    @extend_schema(request=NewUserSerializer, responses={201: UserSerializer})
    def create(self, request: Request) -> Response:
        """Make a user with a password (Django's password rules; 403 when passwords
        are switched off)."""
        given = NewUserSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        user = users.create_user(**given.validated_data)
        return Response(self._shown(user.username), status=status.HTTP_201_CREATED)

    @extend_schema(request=UserChangeSerializer, responses={200: UserSerializer})
    def partial_update(self, request: Request, username: str) -> Response:
        """Switch her off (`{"is_active": false}`: every session, token and open
        socket of hers stops at once) or on, make her staff or not, set her names
        and email. Refused (400, by field): herself off or unstaffed, the last
        active staff, a superuser by a non-superuser, a field her sign-in provider
        sets."""
        given = UserChangeSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        user = users.change_user(
            actor=request.user, user=self.get_object(), changes=given.validated_data
        )
        return Response(self._shown(user.username))

    @extend_schema(methods=["GET"], responses={200: IdentitySerializer})
    @extend_schema(
        methods=["PUT"], request=IdentityInput, responses={200: IdentitySerializer}
    )
    @extend_schema(methods=["DELETE"], responses={204: None})
    @action(detail=True, methods=["get", "put", "delete"], url_path="identity")
    def identity(self, request: Request, username: str) -> Response:
        """Her link to the sign-in provider: read, set (by subject) or remove it.

        PUT links her to the subject: its next provider sign-in is her, and a
        subject linked to another user moves to her. Never for a superuser (403);
        409 if she is linked to another subject (DELETE first)."""
        user = self.get_object()
        if request.method == "DELETE":
            accounts.unlink(user=user)
            return Response(status=status.HTTP_204_NO_CONTENT)
        if request.method == "PUT":
            body = validated(IdentityInput, request.data)
            identity = accounts.link_by_staff(user=user, subject=body.subject)
        else:
            identity = accounts.identity_of(user=user)
        return Response(IdentitySerializer(identity).data)


class InviteSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    email = serializers.CharField()
    is_staff = serializers.BooleanField()
    groups = serializers.SerializerMethodField()
    created_by = serializers.CharField(
        source="created_by.get_username", allow_null=True, default=None
    )
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_groups(self, invite: Invite) -> list[str]:
        return sorted(group.name for group in invite.groups.all())


class IssuedInviteSerializer(InviteSerializer):
    link = serializers.CharField(
        help_text="The link the invitee opens: shown only now (the server keeps a "
        "digest of its token). It works once, until expires_at."
    )
    mailed = serializers.BooleanField(
        help_text="It was mailed to `email` (an SMTP server is configured)."
    )


class NewInviteSerializer(serializers.Serializer):
    email = serializers.EmailField(required=False, allow_blank=True, default="")
    is_staff = serializers.BooleanField(required=False, default=False)
    groups = serializers.ListField(
        child=serializers.CharField(max_length=150),
        required=False,
        default=list,
        max_length=100,
    )
    days = serializers.IntegerField(
        required=False,
        default=invites.DAYS_DEFAULT,
        min_value=1,
        max_value=invites.DAYS_MAX,
        help_text="How long the link works.",
    )

    def validate_groups(self, names: list[str]) -> list[Group]:
        return _group_names(names)


class InviteViewSet(ActorFromRequest, viewsets.GenericViewSet):
    """Invitations (staff only): the unused ones listed, made, withdrawn."""

    permission_classes = [permissions.IsAdminUser]
    # JSON only: every field is optional, so a form that lost its fields (a
    # multipart body whose boundary never came) would make an invitation.
    parser_classes = [JSONParser]
    serializer_class = InviteSerializer
    lookup_value_converter = ID_CONVERTER
    queryset = Invite.objects.none()  # for the schema

    @extend_schema(responses={200: InviteSerializer(many=True)})
    def list(self, request: Request) -> Response:
        """The invitations neither used nor expired, newest first."""
        return Response(InviteSerializer(invites.pending(), many=True).data)

    @extend_schema(request=NewInviteSerializer, responses={201: IssuedInviteSerializer})
    def create(self, request: Request) -> Response:
        """Make an invitation: its link is in the answer, once; mailed to `email`
        too when an SMTP server is configured."""
        given = NewInviteSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        issued = invites.create_invite(by=request.user, **given.validated_data)
        path = reverse("people:invite", kwargs={"token": issued.token})
        link = request.build_absolute_uri(path)
        mailed = invites.mail_invite(invite=issued.invite, link=link)
        issued.invite.link, issued.invite.mailed = link, mailed
        body = IssuedInviteSerializer(issued.invite).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(responses={204: None})
    def destroy(self, request: Request, pk: int) -> Response:
        """Withdraw an unused invitation: its link opens nothing from now on."""
        invites.withdraw(invite_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)
