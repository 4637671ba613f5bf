"""The agents API: sessions, messages, events, state, runs (agents themselves:
agents.api.agent_views)."""

from itertools import groupby

from django.conf import settings
from django.http import HttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param
from rest_framework.views import APIView

from agents import artifacts, memory, session_list
from agents.adk.artifacts import USER_SCOPE
from agents.adk.session_state import session_state
from agents.answers.answer import answer_request
from agents.api.inputs import FormParser, JSONParser, MultiPartParser, validated
from agents.api.serializers import (
    ArtifactSerializer,
    ArtifactUploadSerializer,
    ArtifactVersionSerializer,
    LongRunningCallSerializer,
    MemoryAddedSerializer,
    MemoryEntrySerializer,
    MemorySearchSerializer,
    RunSerializer,
    SessionCreateSerializer,
    SessionModelsSerializer,
    SessionPageSerializer,
    SessionSerializer,
    StateSerializer,
)
from agents.events.log import EVENTS_BATCH, events_after, events_before
from agents.events.wire import (
    EventFrameList,
    frame_from_row,
    frame_json,
    frame_schema,
)
from agents.inputs import (
    FunctionResponseInput,
    MessageInput,
    SessionChange,
    SessionQuery,
)
from agents.model_picks import options_for, pick_model
from agents.models import Artifact, Run
from agents.params import (
    NAME_CONVERTER,
    bool_param,
    parse_whole_number,
    seq_bound_param,
    whole_number_param,
)
from agents.realtime.frames import client_frame_schema, server_frame_schemas
from agents.requests import inbox
from agents.requests.kinds import CALL
from agents.sessions import (
    AgentNotAvailable,
    AgentNotLoaded,
    access_run,
    access_session,
    create_session,
    get_draft,
    get_usable_agent,
    visible_sessions,
)
from agents.titles import rename_session
from agents.turns import start

TOO_MANY_TURNS = (
    "Too many turns queued or running: in this session"
    " (TOOLCRIB_MAX_QUEUED_TURNS_PER_SESSION) or yours (..._PER_USER)."
)
SESSION_CLOSED = "The session is closed: it takes no new messages, answers or files."


class IsStaffOrReadOnly(permissions.BasePermission):
    def has_permission(self, request: Request, view) -> bool:
        return request.method in permissions.SAFE_METHODS or request.user.is_staff


class SessionViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """My sessions. The ADK user id is always the signed-in user."""

    serializer_class = SessionSerializer
    lookup_value_converter = NAME_CONVERTER

    def get_queryset(self):
        return visible_sessions(user=self.request.user)

    def get_object(self):
        return access_session(user=self.request.user, session_id=self.kwargs["pk"])

    def perform_destroy(self, instance) -> None:
        # Its files go with it; the user's `user:` files and memory stay.
        artifacts.delete_session_artifacts(session=instance)
        instance.delete()

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "search",
                str,
                description="Words its title or messages (yours and the model's) "
                "hold, in any order; a word also finds the words it begins. Best "
                "match first.",
            ),
            OpenApiParameter("agent", str, description="Only this agent's sessions."),
            OpenApiParameter(
                "archived", bool, description="true: the archived sessions instead."
            ),
            OpenApiParameter(
                "cursor",
                str,
                description="Where the page starts: the `cursor` of the previous "
                "page's `next` link (opaque). Without it, the first page.",
            ),
            OpenApiParameter(
                "page",
                int,
                description=f"{session_list.PAGE_SIZE} sessions a page, from 1: a "
                "search's pages, and the list's for clients written before "
                "`cursor` (a deep page costs more than by cursor). Follow `next`.",
            ),
        ],
        responses=SessionPageSerializer,
    )
    def list(self, request: Request) -> Response:
        """My sessions, latest activity first (or best match, with a snippet of
        the matching text), a page at a time: follow `next`."""
        query = validated(SessionQuery, request.query_params)
        page = session_list.list_sessions(user=request.user, **dict(query))
        following = None
        if page.next_cursor is not None:
            url = remove_query_param(request.build_absolute_uri(), "page")
            following = replace_query_param(url, "cursor", page.next_cursor)
        elif page.has_next:
            following = replace_query_param(
                request.build_absolute_uri(), "page", query.page + 1
            )
        sessions = SessionSerializer(page.sessions, many=True).data
        return Response({"results": sessions, "next": following})

    @extend_schema(request=SessionChange, responses=SessionSerializer)
    def partial_update(self, request: Request, pk: str) -> Response:
        """Rename the session, or archive it or bring it back (owner or staff); pick
        the model its next turns run on (its owner: GET .../models/ lists them)."""
        session = self.get_object()
        change = validated(SessionChange, request.data)
        if change.model is not None:
            pick_model(session=session, user=request.user, model=change.model)
        if change.title is not None:
            rename_session(session=session, title=change.title)
        if change.archived is True:
            session_list.archive_session(session=session)
        elif change.archived is False:
            session_list.unarchive_session(session=session)
        return Response(SessionSerializer(session).data)

    @extend_schema(responses=SessionModelsSerializer)
    @action(detail=True, methods=["get"], url_path="models")
    def model_options(self, request: Request, pk: str) -> Response:
        """The models the session's owner may pick for it: offered by its agent and
        granted to her (the agent's own first); `picker` false when there is no
        choice to make."""
        session = self.get_object()
        options = options_for(session=session, user_id=session.owner_id or 0)
        body = {
            "model": session.model,
            "picker": len(options) > 1 and session.owner_id == request.user.pk,
            "options": [{"name": o.name, "default": o.default} for o in options],
        }
        return Response(body)

    @extend_schema(request=SessionCreateSerializer, responses={201: SessionSerializer})
    def create(self, request: Request) -> Response:
        data = SessionCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        name, draft = data.validated_data["agent"], data.validated_data["draft"]
        try:
            if draft:
                agent = get_draft(user=request.user, name=name)
            else:
                agent = get_usable_agent(user=request.user, name=name)
        except (AgentNotAvailable, AgentNotLoaded) as exc:
            raise ValidationError({"agent": [str(exc)]}) from None
        session = create_session(user=request.user, agent=agent)
        return Response(SessionSerializer(session).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=MessageInput,
        responses={
            202: RunSerializer,
            200: RunSerializer,
            409: OpenApiResponse(description=SESSION_CLOSED),
            429: OpenApiResponse(description=TOO_MANY_TURNS),
        },
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
        message = validated(MessageInput, request.data)
        run = start.start_turn(
            session=session,
            user=request.user,
            text=message.text,
            tool_choice=message.tool_choice,
        )
        return _run_response(request, run)

    @extend_schema(
        responses={200: EventFrameList},
        parameters=[
            OpenApiParameter(
                "after", int, description="Only events with a greater seq."
            ),
            OpenApiParameter(
                "limit", int, description=f"At most this many (max {EVENTS_BATCH})."
            ),
            OpenApiParameter(
                "before",
                str,
                description=(
                    "Page back: the newest `limit` events with a smaller seq (`end`:"
                    " the newest of all), still in seq order."
                ),
            ),
        ],
    )
    @action(detail=True, methods=["get"])
    def events(self, request: Request, pk: str) -> Response:
        """The session's stored events in seq order, in the wire shape."""
        session = self.get_object()
        params = request.query_params
        after = whole_number_param(params, "after", default=0)
        limit = min(
            whole_number_param(params, "limit", default=EVENTS_BATCH), EVENTS_BATCH
        )
        if params.get("before", "") == "":
            rows = events_after(session_id=session.id, after=after, limit=limit)
        else:
            before = seq_bound_param(params, "before")
            rows = events_before(
                session_id=session.id, before=before, after=after, limit=limit
            )
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

    @extend_schema(
        methods=["GET"], responses=ArtifactSerializer(many=True), request=None
    )
    @extend_schema(
        methods=["POST"],
        request={"multipart/form-data": ArtifactUploadSerializer},
        responses={
            201: ArtifactVersionSerializer,
            409: OpenApiResponse(description=SESSION_CLOSED),
        },
    )
    @action(
        detail=True,
        methods=["get", "post"],
        parser_classes=[MultiPartParser, FormParser],
    )
    def artifacts(self, request: Request, pk: str) -> Response:
        """The session's artifacts (and the user's `user:` ones), or upload a file."""
        session = self.get_object()
        if request.method == "POST":
            return _upload(request, session)
        rows = artifacts.session_artifacts(session=session)
        listing = [
            _artifact_listing(name, list(group))
            for name, group in groupby(rows, key=lambda row: row.filename)
        ]
        return Response(ArtifactSerializer(listing, many=True).data)

    @extend_schema(
        responses={(200, "*/*"): OpenApiTypes.BINARY},
        parameters=[
            OpenApiParameter("version", int, description="Blank: the latest."),
            OpenApiParameter(
                "inline",
                bool,
                description="Shown in place (a frame of this site may hold it) if "
                "its type is a PDF, an image other than SVG, or plain text; any "
                "other type is still a download.",
            ),
        ],
    )
    @action(
        detail=True,
        methods=["get"],
        url_path="artifacts/<filename:filename>",
        url_name="artifact",
    )
    def artifact(self, request: Request, pk: str, filename: str) -> HttpResponse:
        """Download one version of an artifact, with its Content-Type.

        Never run as a page of this site: a download, or shown in place only for
        the types `artifacts.INLINE_TYPES` lists, always sandboxed (no script,
        an origin of its own) and never sniffed into another type.
        """
        session = self.get_object()
        found = artifacts.download_artifact(
            session=session,
            filename=filename,
            version=_version_param(request),
        )
        inline = bool_param(request.query_params, "inline") and (
            artifacts.may_show_inline(found.content_type)
        )
        response = HttpResponse(found.content, content_type=found.content_type)
        response["Content-Disposition"] = content_disposition_header(
            as_attachment=not inline, filename=found.filename
        )
        response["Content-Security-Policy"] = "sandbox"
        response["X-Content-Type-Options"] = "nosniff"
        response["X-Frame-Options"] = "SAMEORIGIN" if inline else "DENY"
        response["X-Artifact-Version"] = str(found.version)
        return response

    @extend_schema(request=None, responses=MemoryAddedSerializer)
    @action(detail=True, methods=["post"], url_path="memory")
    def remember(self, request: Request, pk: str) -> Response:
        """Add this session to my memory of its agent (again, if it changed)."""
        count = memory.remember_session(session=self.get_object())
        return Response({"remembered": count})

    @extend_schema(request=None, responses=SessionSerializer)
    @action(detail=True, methods=["post"])
    def close(self, request: Request, pk: str) -> Response:
        """Close the session: it joins my memory and takes no new turns."""
        session = memory.close_session(session=self.get_object())
        return Response(SessionSerializer(session).data)

    @extend_schema(responses=LongRunningCallSerializer(many=True))
    @action(detail=True, methods=["get"])
    def calls(self, request: Request, pk: str) -> Response:
        """The session's long-running calls, newest first."""
        rows = inbox.session_requests(session=self.get_object(), kind=CALL)[:200]
        return Response(LongRunningCallSerializer(rows, many=True).data)

    @extend_schema(
        request=FunctionResponseInput,
        responses={
            202: RunSerializer,
            200: RunSerializer,
            409: OpenApiResponse(description=SESSION_CLOSED),
        },
        parameters=[
            OpenApiParameter(
                "wait", bool, description="Answer when the resumed turn has ended."
            )
        ],
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="function-responses",
        parser_classes=[JSONParser],
    )
    def function_responses(self, request: Request, pk: str) -> Response:
        """Post a long-running call's result; the agent resumes where it paused."""
        answer = validated(FunctionResponseInput, request.data)
        run = answer_request(
            user=request.user,
            kind=CALL,
            session_id=pk,
            call_id=answer.call_id,
            answer=answer.response,
        )
        return _run_response(request, run)


class CallListView(APIView):
    """Long-running calls waiting for an answer I may give: my sessions', my groups'."""

    @extend_schema(responses=LongRunningCallSerializer(many=True))
    def get(self, request: Request) -> Response:
        rows = inbox.answerable(user=request.user, kind=CALL)[:200]
        return Response(LongRunningCallSerializer(rows, many=True).data)


class MemorySearchView(APIView):
    """Search my own memory of one agent, as the agent's search_memory does."""

    @extend_schema(
        parameters=[MemorySearchSerializer], responses=MemoryEntrySerializer(many=True)
    )
    def get(self, request: Request) -> Response:
        query = MemorySearchSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        found = memory.search_memory(
            user=request.user,
            agent_name=query.validated_data["agent"],
            query=query.validated_data["q"],
        )
        return Response(MemoryEntrySerializer(map(_memory_out, found), many=True).data)


class RunView(APIView):
    """One run: status, timings, error, token usage."""

    @extend_schema(responses=RunSerializer)
    def get(self, request: Request, pk) -> Response:
        return Response(RunSerializer(access_run(user=request.user, run_id=pk)).data)


def _run_response(request: Request, run: Run) -> Response:
    if bool_param(request.query_params, "wait"):
        run = start.wait_for_run(run=run, timeout=settings.TOOLCRIB_WAIT_TIMEOUT)
    code = status.HTTP_200_OK if run.is_finished else status.HTTP_202_ACCEPTED
    return Response(RunSerializer(run).data, status=code)


def _version_param(request: Request) -> int | None:
    raw = request.query_params.get("version")
    return None if raw in (None, "") else parse_whole_number(raw, name="version")


def _upload(request: Request, session) -> Response:
    data = ArtifactUploadSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    upload = data.validated_data["file"]
    row = artifacts.upload_artifact(
        session=session,
        filename=data.validated_data["name"],
        content=upload.read(),
        mime_type=upload.content_type or "application/octet-stream",
    )
    body = {"filename": row.filename, **ArtifactVersionSerializer(row).data}
    return Response(body, status=status.HTTP_201_CREATED)


def _artifact_listing(filename: str, rows: list[Artifact]) -> dict:
    scope = "user" if rows[0].session_key == USER_SCOPE else "session"
    return {
        "filename": filename,
        "scope": scope,
        "latest": rows[-1].version,
        "versions": rows,
    }


def _memory_out(entry) -> dict:
    texts = [part.text for part in entry.content.parts or [] if part.text]
    return {
        "id": entry.id,
        "author": entry.author,
        "timestamp": entry.timestamp,
        "session": entry.custom_metadata.get("session_id", ""),
        "text": " ".join(texts),
    }


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
