"""The agents API: agents users may talk to, and the builder staff make them with.

Every save of a row agent is a version (agents.agent_versions): list, diff two,
roll back; a draft is saved beside the agent, tried by staff in a session, then
published. Every change is in the change audit (agents.changes).
"""

from collections.abc import Mapping

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from agents import agent_versions
from agents.adk.builder import resolve_toolset, toolset_source
from agents.adk.providers import effective_model
from agents.adk.tool_selection import tool_names
from agents.api.agent_serializers import (
    AgentOptionsSerializer,
    AgentSerializer,
    AgentVersionSerializer,
    DuplicateSerializer,
    RollbackSerializer,
    VersionDiffQuerySerializer,
    VersionDiffSerializer,
)
from agents.changes import ActorFromRequest, record
from agents.models import AgentSpec, AgentVersion
from agents.params import NAME_CONVERTER
from agents.sessions import listed_agents

# Model names the builder suggests besides those agents use (any name a provider
# serves is taken: agents.adk.providers).
SUGGESTED_MODELS = (
    "offline/demo",
    "openai/gpt-4o-mini",
    "anthropic/claude-sonnet-4-5",
    "gemini-2.5-flash",
    "ollama_chat/llama3.2",
    "hosted_vllm/",
)
# Actions only staff may take, reads included.
STAFF_ACTIONS = frozenset(
    {
        "versions",
        "diff",
        "rollback",
        "duplicate",
        "archive",
        "restore",
        "draft",
        "publish",
        "builder_options",
    }
)
DRAFT = AgentVersion.Status.DRAFT


class AgentPermission(permissions.BasePermission):
    """Reads for everyone signed in, but the builder's; changes for staff."""

    def has_permission(self, request: Request, view) -> bool:
        if view.action in STAFF_ACTIONS:
            return request.user.is_staff
        return request.method in permissions.SAFE_METHODS or request.user.is_staff


class AgentViewSet(ActorFromRequest, viewsets.ModelViewSet):
    """Agents users can talk to. Staff build row agents (every save a version);
    code agents are read-only but for who may use them, tool_choice and retention."""

    serializer_class = AgentSerializer
    permission_classes = [permissions.IsAuthenticated, AgentPermission]
    lookup_field = "name"
    lookup_value_converter = NAME_CONVERTER

    def get_queryset(self):
        staff = self.request.user.is_staff
        archived = self.request.query_params.get("archived")
        if self.action == "list" and archived not in (None, "all"):
            raise ValidationError({"archived": ['Only "all" (archived agents too).']})
        if staff and self.action != "list":
            agents = AgentSpec.objects.all()
        elif staff and archived == "all":
            agents = AgentSpec.objects.filter(draft_of__isnull=True)
        else:
            agents = listed_agents(user=self.request.user)
        return agents.select_related("draft").prefetch_related("sub_agents", "groups")

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "archived",
                str,
                enum=["all"],
                description="all: archived agents too (staff; others see the "
                "agents they may use either way).",
            )
        ]
    )
    def list(self, request: Request, *args, **kwargs) -> Response:
        """The agents you may use (staff: every agent, and those that do not load)."""
        return super().list(request, *args, **kwargs)

    def perform_create(self, serializer: AgentSerializer) -> None:
        with transaction.atomic():
            agent = serializer.save()
            agent_versions.record_version(
                agent=agent, user=self.request.user, note="created"
            )

    def perform_update(self, serializer: AgentSerializer) -> None:
        if serializer.instance.draft_of_id is not None:
            raise ValidationError(
                {"detail": "A draft is saved through its agent's draft/ and published."}
            )
        with transaction.atomic():
            agent = serializer.save()
            if agent.source == AgentSpec.Source.DATABASE:
                agent_versions.record_version(agent=agent, user=self.request.user)

    def perform_destroy(self, instance: AgentSpec) -> None:
        if instance.source == AgentSpec.Source.CODE:
            raise ValidationError(
                {"detail": "Agents defined in code are removed in code."}
            )
        tried = AgentSpec.objects.filter(draft_of=instance, sessions__isnull=False)
        if instance.sessions.exists() or tried.exists():
            agent_versions.set_archived(agent=instance, archived=True)
            return
        instance.delete()

    def _row_agent(self) -> AgentSpec:
        agent = self.get_object()
        if agent.source == AgentSpec.Source.CODE or agent.draft_of_id is not None:
            refusal = "Only agents made here have versions and drafts."
            if self.request.method == "GET":  # nothing of the kind to read
                raise NotFound(refusal)
            raise ValidationError({"detail": refusal})
        return agent

    @extend_schema(request=None, responses=AgentVersionSerializer(many=True))
    @action(detail=True, methods=["get"])
    def versions(self, request: Request, name: str) -> Response:
        """Every saved version of the agent, newest first (staff)."""
        agent = self._row_agent()
        rows = agent.versions.select_related("author")[:500]
        return Response(AgentVersionSerializer(rows, many=True).data)

    @extend_schema(
        parameters=[VersionDiffQuerySerializer], responses=VersionDiffSerializer
    )
    @action(detail=True, methods=["get"], url_path="versions/diff")
    def diff(self, request: Request, name: str) -> Response:
        """What changed between two versions, field by field (staff)."""
        agent = self._row_agent()
        query = VersionDiffQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        numbers = sorted((query.validated_data["a"], query.validated_data["b"]))
        older, newer = (
            agent_versions.get_version(agent=agent, number=n) for n in numbers
        )
        diff = agent_versions.diff_versions(older, newer)
        return Response(VersionDiffSerializer(diff).data)

    @extend_schema(request=RollbackSerializer, responses=AgentSerializer)
    @action(detail=True, methods=["post"])
    def rollback(self, request: Request, name: str) -> Response:
        """Make an old version's fields the agent's again: a new version (staff)."""
        asked = RollbackSerializer(data=request.data)  # the body first: 400 if bad
        asked.is_valid(raise_exception=True)
        agent = self._row_agent()
        number = asked.validated_data["version"]
        old = agent_versions.get_version(agent=agent, number=number)
        with transaction.atomic():
            self._save_fields(agent, old.data)
            agent_versions.record_version(
                agent=agent, user=request.user, note=f"rollback to v{number}"
            )
            record(request.user, agent, "rollback", {"to_version": number})
        return Response(self._out(agent))

    @extend_schema(request=DuplicateSerializer, responses={201: AgentSerializer})
    @action(detail=True, methods=["post"])
    def duplicate(self, request: Request, name: str) -> Response:
        """A new agent with this one's fields, under a new name (staff)."""
        asked = DuplicateSerializer(data=request.data)  # the body first: 400 if bad
        asked.is_valid(raise_exception=True)
        agent = self._row_agent()
        data = {**agent_versions.snapshot(agent), "name": asked.validated_data["name"]}
        copy = AgentSerializer(data=data, context=self.get_serializer_context())
        copy.is_valid(raise_exception=True)
        with transaction.atomic():
            new = copy.save()
            agent_versions.record_version(
                agent=new, user=request.user, note=f"duplicate of {agent.name}"
            )
        return Response(self._out(new), status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=AgentSerializer)
    @action(detail=True, methods=["post"])
    def archive(self, request: Request, name: str) -> Response:
        """Archive the agent: no new sessions; its sessions stay readable (staff)."""
        agent = agent_versions.set_archived(agent=self.get_object(), archived=True)
        return Response(self._out(agent))

    @extend_schema(request=None, responses=AgentSerializer)
    @action(detail=True, methods=["post"])
    def restore(self, request: Request, name: str) -> Response:
        """Bring an archived agent back (staff)."""
        agent = agent_versions.set_archived(agent=self.get_object(), archived=False)
        return Response(self._out(agent))

    @extend_schema(methods=["GET"], request=None, responses=AgentSerializer)
    @extend_schema(
        methods=["PATCH"], request=AgentSerializer, responses=AgentSerializer
    )
    @extend_schema(methods=["DELETE"], request=None, responses={204: None})
    @action(detail=True, methods=["get", "patch", "delete"])
    def draft(self, request: Request, name: str) -> Response:
        """The agent's unpublished draft; PATCH saves a draft version, DELETE
        discards the draft (staff).

        Staff try it in a session (`POST /api/sessions/` with `"draft": true`)
        before publishing it; everyone else keeps the published agent. A
        discarded draft's sessions go on with the published agent.
        """
        edit = _fields_of(request.data) if request.method == "PATCH" else {}
        agent = self._row_agent()
        if request.method == "DELETE":
            agent_versions.discard_draft(agent=agent, user=request.user)
            return Response(status=status.HTTP_204_NO_CONTENT)
        if request.method == "GET":
            draft = AgentSpec.objects.filter(draft_of=agent).first()
            if draft is None:
                raise NotFound("This agent has no draft.")
            return Response(self._out(draft))
        with transaction.atomic():
            draft = agent_versions.ensure_draft(agent=agent)
            self._save_fields(draft, edit)
            agent_versions.record_version(agent=agent, user=request.user, status=DRAFT)
        return Response(self._out(draft))

    @extend_schema(request=None, responses=AgentSerializer)
    @action(detail=True, methods=["post"])
    def publish(self, request: Request, name: str) -> Response:
        """Make the draft's fields the agent's, for everyone: a new version (staff)."""
        agent = self._row_agent()
        draft = AgentSpec.objects.filter(draft_of=agent).first()
        if draft is None:
            raise ValidationError({"detail": "This agent has no draft to publish."})
        with transaction.atomic():
            self._save_fields(agent, agent_versions.snapshot(draft))
            agent_versions.record_version(
                agent=agent, user=request.user, note="published the draft"
            )
        return Response(self._out(agent))

    @extend_schema(request=None, responses=AgentOptionsSerializer)
    # Not named `options`: that is the view's handler of HTTP OPTIONS.
    @action(detail=False, methods=["get"], url_path="options")
    def builder_options(self, request: Request) -> Response:
        """What the builder offers: models, toolsets and their tools, agents, groups."""
        used = AgentSpec.objects.exclude(model="").values_list("model", flat=True)
        models = {effective_model(""), *SUGGESTED_MODELS, *used}
        toolsets: dict[str, list[str] | None] = {}
        for name in settings.TOOLCRIB_TOOLSETS:
            try:
                toolsets[name] = sorted(tool_names(resolve_toolset(name)))
            except Exception:  # noqa: BLE001 - a broken toolset is listed, not picked
                continue
        for name in sorted(toolset_source().names()):
            toolsets.setdefault(name, None)
        agents = AgentSpec.objects.filter(draft_of__isnull=True).values_list(
            "name", flat=True
        )
        body = {
            "models": sorted(models),
            "toolsets": toolsets,
            "agents": list(agents),
            "groups": list(
                Group.objects.order_by("name").values_list("name", flat=True)
            ),
        }
        return Response(AgentOptionsSerializer(body).data)

    def _save_fields(self, agent: AgentSpec, data) -> AgentSpec:
        """Validate `data` as a partial edit of `agent` and save it (400 if bad)."""
        fields = {k: v for k, v in _fields_of(data).items() if k != "name"}
        edit = AgentSerializer(
            agent, data=fields, partial=True, context=self.get_serializer_context()
        )
        edit.is_valid(raise_exception=True)
        return edit.save()

    def _out(self, agent: AgentSpec) -> dict:
        return AgentSerializer(agent, context=self.get_serializer_context()).data


def _fields_of(data) -> dict:
    """A body's fields (its name left to the agent), else a 400: not a JSON object."""
    if not isinstance(data, Mapping):
        raise ValidationError({"non_field_errors": ["Send a JSON object of fields."]})
    return dict(data)
