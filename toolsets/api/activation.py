"""A session's toolsets over REST: which are active, and switching them on or off;
and its tools, with why each one its user cannot use now is unavailable."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.client_input import JSONParser
from agents.runtime import AgentBuildError, access_session
from toolsets import activation
from toolsets.session_tools import session_tools

MAX_NAMES = 100


class SessionToolsetSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    source = serializers.CharField()
    active = serializers.BooleanField()
    active_by_default = serializers.BooleanField()
    tools = serializers.ListField(child=serializers.CharField())
    changed_by = serializers.CharField(allow_null=True)
    changed_at = serializers.DateTimeField(allow_null=True)


class ActiveSerializer(serializers.Serializer):
    active = serializers.BooleanField(required=True)

    def to_internal_value(self, data):
        if not isinstance(data, dict) or not isinstance(data.get("active"), bool):
            raise ValidationError({"active": ["Must be true or false."]})
        extra = sorted(set(data) - {"active"})
        if extra:
            raise ValidationError({key: ["Unknown field."] for key in extra})
        return super().to_internal_value(data)


class SwitchSerializer(serializers.Serializer):
    """Several toolsets at once: `{"names": [...], "active": true|false}`."""

    names = serializers.ListField(
        child=serializers.CharField(max_length=100),
        min_length=1,
        max_length=MAX_NAMES,
    )
    active = serializers.BooleanField(required=True)

    def to_internal_value(self, data):
        if not isinstance(data, dict) or not isinstance(data.get("active"), bool):
            raise ValidationError({"active": ["Must be true or false."]})
        extra = sorted(set(data) - {"names", "active"})
        if extra:
            raise ValidationError({key: ["Unknown field."] for key in extra})
        return super().to_internal_value(data)


NOT_FOUND = OpenApiResponse(description="No such session, or not yours.")


class SessionToolSerializer(serializers.Serializer):
    full_name = serializers.CharField()
    name = serializers.CharField(help_text="The name the model calls.")
    toolset = serializers.CharField()
    available = serializers.BooleanField()
    reason = serializers.CharField(
        allow_null=True,
        help_text="Why it is unavailable, null when available: deny, policy, "
        "disabled, missing, unknown (access), inactive (switched off in this "
        "session), absent (a conditional toolset whose condition does not hold), "
        "unreviewed (an imported tool waiting for staff review).",
    )
    why = serializers.CharField(
        allow_null=True,
        help_text='In plain words, e.g. "denied for your group support by an admin".',
    )
    condition_text = serializers.CharField(
        help_text="The condition on its arguments an available tool is allowed on."
    )
    description = serializers.CharField(
        help_text="What the tool does: the first line of its description."
    )


class SessionToolsListSerializer(serializers.Serializer):
    tools = SessionToolSerializer(many=True)


class SessionToolsView(APIView):
    """Every tool of the session's agent: available to you now, or why not."""

    @extend_schema(responses={200: SessionToolsListSerializer, 404: NOT_FOUND})
    def get(self, request: Request, pk: str) -> Response:
        """Read again after a `tools_changed` event or an access message."""
        session = access_session(user=request.user, session_id=pk)
        try:
            tools = session_tools(session=session)
        except AgentBuildError:  # the agent's code no longer loads
            tools = []
        return Response(SessionToolsListSerializer({"tools": tools}).data)


def _toolsets(session) -> list[activation.SessionToolsetView]:
    try:
        return activation.session_toolsets(session=session)
    except AgentBuildError:  # the agent's code no longer loads: nothing to switch
        return []


class SessionToolsetsView(APIView):
    """The toolsets of a session's agent you may use, and whether each is active;
    switch several at once."""

    parser_classes = [JSONParser]

    @extend_schema(responses={200: SessionToolsetSerializer(many=True), 404: NOT_FOUND})
    def get(self, request: Request, pk: str) -> Response:
        session = access_session(user=request.user, session_id=pk)
        views = _toolsets(session)
        return Response(SessionToolsetSerializer(views, many=True).data)

    @extend_schema(
        request=SwitchSerializer,
        responses={
            200: SessionToolsetSerializer(many=True),
            400: OpenApiResponse(description="An unknown toolset, or a bad body."),
            404: NOT_FOUND,
        },
    )
    def post(self, request: Request, pk: str) -> Response:
        """Activate or deactivate several toolsets, all or none: the toolsets named,
        in that order, as they are now."""
        session = access_session(user=request.user, session_id=pk)
        data = SwitchSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            switches = activation.set_toolsets_active(
                session=session,
                names=data.validated_data["names"],
                active=data.validated_data["active"],
                changed_by=request.user,
            )
        except (activation.UnknownToolset, AgentBuildError) as exc:
            raise ValidationError({"names": [str(exc)]}) from None
        views = [switch.toolset for switch in switches]
        return Response(SessionToolsetSerializer(views, many=True).data)

    @extend_schema(
        request=SwitchSerializer,
        responses={200: SessionToolsetSerializer(many=True), 404: NOT_FOUND},
    )
    def patch(self, request: Request, pk: str) -> Response:
        """Same as POST."""
        return self.post(request, pk)


class SessionToolsetView(APIView):
    """Activate or deactivate one toolset in this session, from the next model step."""

    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="sessions_toolset_partial_update",
        request=ActiveSerializer,
        responses={
            200: SessionToolsetSerializer,
            400: OpenApiResponse(description="Unknown toolset, or a bad body."),
            404: NOT_FOUND,
        },
    )
    def patch(self, request: Request, pk: str, name: str) -> Response:
        session = access_session(user=request.user, session_id=pk)
        data = ActiveSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            switch = activation.set_toolset_active(
                session=session,
                name=name,
                active=data.validated_data["active"],
                changed_by=request.user,
            )
        except (activation.UnknownToolset, AgentBuildError) as exc:
            raise ValidationError({"name": [str(exc)]}) from None
        return Response(SessionToolsetSerializer(switch.toolset).data)

    @extend_schema(
        operation_id="sessions_toolset_create",
        request=ActiveSerializer,
        responses={
            200: SessionToolsetSerializer,
            400: OpenApiResponse(description="Unknown toolset, or a bad body."),
            404: NOT_FOUND,
        },
    )
    def post(self, request: Request, pk: str, name: str) -> Response:
        """Same as PATCH, for clients that only POST."""
        return self.patch(request, pk, name)
