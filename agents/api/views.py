"""The agents API: agents, sessions, messages, events, state, runs."""

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents import runs
from agents.adk.sessions import session_state
from agents.api.serializers import (
    AgentSerializer,
    MessageSerializer,
    RunSerializer,
    SessionCreateSerializer,
    SessionSerializer,
    StateSerializer,
)
from agents.events import EventFrameList, frame_from_row, frame_json, frame_schema
from agents.frames import client_frame_schema, server_frame_schemas
from agents.models import AgentSpec, Event
from agents.sessions import (
    AgentNotAvailable,
    access_run,
    access_session,
    create_session,
    get_usable_agent,
    usable_agents,
    visible_sessions,
)

MAX_EVENTS = 5000


class IsStaffOrReadOnly(permissions.BasePermission):
    def has_permission(self, request: Request, view) -> bool:
        return request.method in permissions.SAFE_METHODS or request.user.is_staff


class AgentViewSet(viewsets.ModelViewSet):
    """Agents users can talk to. Staff define agents as rows; code agents are read-only."""

    serializer_class = AgentSerializer
    permission_classes = [permissions.IsAuthenticated, IsStaffOrReadOnly]
    lookup_field = "name"

    def get_queryset(self):
        if self.request.user.is_staff and self.action != "list":
            return AgentSpec.objects.prefetch_related("sub_agents")
        return usable_agents(user=self.request.user).prefetch_related("sub_agents")

    def perform_destroy(self, instance: AgentSpec) -> None:
        if instance.source == AgentSpec.Source.CODE:
            raise ValidationError(
                {"detail": "Agents defined in code are removed in code."}
            )
        if instance.sessions.exists():
            instance.is_active = False
            instance.save(update_fields=["is_active", "updated_at"])
            return
        instance.delete()


class SessionViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """My sessions. The ADK user id is always the signed-in user."""

    serializer_class = SessionSerializer

    def get_queryset(self):
        return visible_sessions(user=self.request.user)

    def get_object(self):
        return access_session(user=self.request.user, session_id=self.kwargs["pk"])

    @extend_schema(request=SessionCreateSerializer, responses={201: SessionSerializer})
    def create(self, request: Request) -> Response:
        data = SessionCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            agent = get_usable_agent(
                user=request.user, name=data.validated_data["agent"]
            )
        except AgentNotAvailable:
            raise ValidationError(
                {"agent": ["No such agent, or you may not use it."]}
            ) from None
        session = create_session(user=request.user, agent=agent)
        return Response(SessionSerializer(session).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=MessageSerializer,
        responses={202: RunSerializer, 200: RunSerializer},
        parameters=[
            OpenApiParameter(
                "wait", bool, description="Answer when the turn has ended."
            )
        ],
    )
    @action(detail=True, methods=["post"])
    def messages(self, request: Request, pk: str) -> Response:
        """Send a message; the turn runs in the background (or wait for it with ?wait=1)."""
        session = self.get_object()
        data = MessageSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = runs.start_turn(
            session=session, user=request.user, text=data.validated_data["text"]
        )
        if request.query_params.get("wait") in {"1", "true", "yes"}:
            run = runs.wait_for_run(run=run, timeout=settings.TOOLCRIB_WAIT_TIMEOUT)
        code = status.HTTP_200_OK if run.is_finished else status.HTTP_202_ACCEPTED
        return Response(RunSerializer(run).data, status=code)

    @extend_schema(
        responses={200: EventFrameList},
        parameters=[
            OpenApiParameter(
                "after", int, description="Only events with a greater seq."
            ),
            OpenApiParameter(
                "limit", int, description=f"At most this many (max {MAX_EVENTS})."
            ),
        ],
    )
    @action(detail=True, methods=["get"])
    def events(self, request: Request, pk: str) -> Response:
        """The session's stored events in seq order, in the wire shape."""
        session = self.get_object()
        after = _int_param(request, "after", 0)
        limit = min(_int_param(request, "limit", MAX_EVENTS), MAX_EVENTS)
        rows = Event.objects.filter(session=session, seq__gt=after).order_by("seq")[
            :limit
        ]
        return Response([frame_json(frame_from_row(row)) for row in rows])

    @extend_schema(responses=StateSerializer)
    @action(detail=True, methods=["get"])
    def state(self, request: Request, pk: str) -> Response:
        """Session, user and app state as the agent sees it (prefixes removed)."""
        return Response(session_state(session=self.get_object()))

    @extend_schema(responses=RunSerializer(many=True))
    @action(detail=True, methods=["get"])
    def runs(self, request: Request, pk: str) -> Response:
        """The session's runs, newest first."""
        session = self.get_object()
        return Response(RunSerializer(session.runs.all()[:200], many=True).data)


class RunView(APIView):
    """One run: status, timings, error, token usage."""

    @extend_schema(responses=RunSerializer)
    def get(self, request: Request, pk) -> Response:
        return Response(RunSerializer(access_run(user=request.user, run_id=pk)).data)


def _int_param(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError({name: ["A whole number."]}) from None
    if value < 0:
        raise ValidationError({name: ["Zero or more."]})
    return value


class EventSchemaView(APIView):
    """JSON schemas of every websocket frame, generated from the pydantic models."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(responses={200: dict})
    def get(self, request: Request) -> Response:
        return Response(
            {
                "event": frame_schema(),
                "server": server_frame_schemas(),
                "client": client_frame_schema(),
            }
        )
