"""API input and output shapes, validated here before any service runs; a message
the socket takes too is validated with its model in agents.inputs. An agent's are
in agents.api.agent_serializers."""

from django.conf import settings
from django.template.defaultfilters import filesizeformat
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from agents.events.wire import run_stats
from agents.models import (
    Artifact,
    Request,
    Run,
    Session,
)
from agents.requests.kinds import CALL, RequestKind
from agents.session_list import Status, session_status


class PersonSerializer(serializers.Serializer):
    """A user as others see her: an id and a username."""

    id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(read_only=True)


class SnippetPartSerializer(serializers.Serializer):
    """A piece of a search result's snippet: text, a word found or not."""

    text = serializers.CharField()
    match = serializers.BooleanField()


class SessionSerializer(serializers.ModelSerializer):
    agent = serializers.SlugRelatedField(slug_field="name", read_only=True)
    owner = PersonSerializer(
        read_only=True,
        allow_null=True,
        help_text="Whose session it is (staff may open anyone's).",
    )
    last_run = serializers.SerializerMethodField()
    status = serializers.SerializerMethodField(
        help_text="closed; waiting (for a person's answer); running (a turn queued "
        "or running); idle."
    )
    draft = serializers.SerializerMethodField(
        help_text="Whether the session tries an agent's unpublished draft (staff)."
    )
    snippet = serializers.SerializerMethodField(
        help_text="In a search's results: the newest matching message's words "
        "around what was found, as text parts (`match`: a word found); null when "
        "only the title matched, and outside a search. Text, never markup."
    )

    class Meta:
        model = Session
        fields = [
            "id",
            "title",
            "agent",
            "owner",
            "app_name",
            "created_at",
            "updated_at",
            "last_seq",
            "status",
            "last_run",
            "closed_at",
            "archived_at",
            "model",
            "draft",
            "snippet",
        ]

    def get_draft(self, session: Session) -> bool:
        return session.agent is not None and session.agent.draft_of_id is not None

    @extend_schema_field(SnippetPartSerializer(many=True, allow_null=True))
    def get_snippet(self, session: Session) -> list[dict] | None:
        parts = getattr(session, "snippet", None)
        if parts is None:
            return None
        return [{"text": part.text, "match": part.match} for part in parts]

    def get_last_run(self, session: Session) -> dict | None:
        """The session's latest run: how it is, or ended (waiting: for what)."""
        if hasattr(session, "last_run_id"):  # annotated by the list, in its query
            if session.last_run_id is None:
                return None
            return {
                "id": str(session.last_run_id),
                "status": session.last_run_status,
                "waiting_for": session.last_run_waiting_for or None,
            }
        run = session.runs.order_by("-created_at").first()
        if run is None:
            return None
        return {
            "id": str(run.id),
            "status": run.status,
            "waiting_for": run.waiting_for or None,
        }

    @extend_schema_field(serializers.ChoiceField(choices=Status.ALL))
    def get_status(self, session: Session) -> str:
        return session_status(session)


class ModelOptionSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="As agents name it.")
    default = serializers.BooleanField(help_text="The agent's own model.")


class SessionModelsSerializer(serializers.Serializer):
    """What GET /api/sessions/{id}/models/ answers (agents.model_picks)."""

    model = serializers.CharField(
        allow_null=True, help_text="The model picked; null: the agent's own."
    )
    picker = serializers.BooleanField(
        help_text="Whether to show a picker: the agent offers a choice, the user "
        "is granted more than one model, and the session is hers."
    )
    options = ModelOptionSerializer(many=True)


@extend_schema_serializer(many=False)  # a page: one object, though the list's
class SessionPageSerializer(serializers.Serializer):
    """A page of my sessions; `next` is the next page's URL (by `cursor`, or a
    search's by `page`), null on the last."""

    results = SessionSerializer(many=True)
    next = serializers.URLField(allow_null=True)


class SessionCreateSerializer(serializers.Serializer):
    agent = serializers.CharField(max_length=100)
    draft = serializers.BooleanField(
        default=False,
        help_text="Try the agent's unpublished draft instead (staff only).",
    )


class RunTokensOutSerializer(serializers.Serializer):
    input = serializers.IntegerField()
    output = serializers.IntegerField()


class RunStatsOutSerializer(serializers.Serializer):
    """agents.events.wire.RunStats, for the schema."""

    model = serializers.CharField()
    tokens = RunTokensOutSerializer()
    duration_ms = serializers.IntegerField(allow_null=True)
    model_calls = serializers.IntegerField()
    tool_calls = serializers.IntegerField()


class RunSerializer(serializers.ModelSerializer):
    session = serializers.CharField(source="session_id", read_only=True)
    duration_ms = serializers.SerializerMethodField()
    waiting_for = serializers.SerializerMethodField(
        help_text="approval, credential or result while waiting; else null."
    )
    resumes = serializers.UUIDField(
        source="resumes_id",
        read_only=True,
        allow_null=True,
        help_text="The run whose request this run's answer resumes.",
    )
    stats = serializers.SerializerMethodField(
        help_text="Once the run has ended: its model, tokens, duration, model and "
        "tool calls (as run_finished carries them); else null."
    )

    class Meta:
        model = Run
        fields = [
            "id",
            "session",
            "status",
            "text",
            "invocation_id",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "duration_ms",
            "prompt_tokens",
            "completion_tokens",
            "total_tokens",
            "message",
            "handoffs",
            "waiting_for",
            "resumes",
            "stats",
            "requeues",
        ]

    def get_waiting_for(self, run: Run) -> str | None:
        return run.waiting_for or None

    @extend_schema_field(RunStatsOutSerializer(allow_null=True))
    def get_stats(self, run: Run) -> dict | None:
        return run_stats(run).model_dump() if run.is_finished else None

    def get_duration_ms(self, run: Run) -> int | None:
        if not (run.started_at and run.finished_at):
            return None
        return int((run.finished_at - run.started_at).total_seconds() * 1000)


class StateSerializer(serializers.Serializer):
    session = serializers.DictField()
    user = serializers.DictField()
    app = serializers.DictField()


class ArtifactVersionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Artifact
        fields = ["version", "mime_type", "size", "custom_metadata", "created_at"]


class ArtifactSerializer(serializers.Serializer):
    """One artifact of a session with all its versions, oldest first."""

    filename = serializers.CharField()
    scope = serializers.ChoiceField(choices=["session", "user"])
    latest = serializers.IntegerField()
    versions = ArtifactVersionSerializer(many=True)


class ArtifactUploadSerializer(serializers.Serializer):
    """A file to upload into a session; `name` defaults to the file's own name."""

    file = serializers.FileField(allow_empty_file=False)
    name = serializers.CharField(required=False, max_length=255)

    def validate(self, attrs):
        upload = attrs["file"]
        limit = settings.TOOLCRIB_MAX_UPLOAD_BYTES
        if upload.size > limit:
            size = filesizeformat(limit)
            raise serializers.ValidationError(
                {"file": [f"Too big: a file may have at most {size} ({limit} bytes)."]}
            )
        name = attrs.get("name") or upload.name or ""
        problem = artifact_name_problem(name)
        if problem:
            raise serializers.ValidationError({"name": [problem]})
        attrs["name"] = name
        return attrs


def artifact_name_problem(name: str) -> str | None:
    """Why a name cannot be an uploaded artifact's, or None if it can."""
    bare = name.removeprefix("user:")
    if not bare.strip():
        return "A name is required."
    if "/" in bare or "\\" in bare or "\x00" in bare:
        return "A name, not a path: no '/' or '\\'."
    if bare in {".", ".."}:
        return "A name, not a path."
    return None


def request_status(kind: RequestKind, **kwargs) -> serializers.ChoiceField:
    """A request's status, among those its kind takes (the schema's enum)."""
    choices = [(status, Request.Status(status).label) for status in kind.statuses]
    return serializers.ChoiceField(choices=choices, **kwargs)


class LongRunningCallSerializer(serializers.ModelSerializer):
    # A request of kind "call", in the shape long-running calls always had.

    call_id = serializers.CharField(max_length=128)
    name = serializers.CharField(source="tool_name", max_length=255)
    agent = serializers.CharField(max_length=128, required=False)
    session = serializers.CharField(source="session_id", read_only=True)
    run = serializers.UUIDField(source="run_id", read_only=True)
    invocation_id = serializers.CharField(max_length=128, required=False)
    answered_by_group = serializers.CharField(
        source="answer_group", max_length=150, required=False
    )
    status = request_status(CALL, required=False)
    response = serializers.JSONField(required=False)
    answer_run = serializers.UUIDField(source="answer_run_id", read_only=True)
    answered_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Request
        fields = [
            "call_id",
            "name",
            "args",
            "agent",
            "session",
            "run",
            "invocation_id",
            "answered_by_group",
            "status",
            "response",
            "answered_by",
            "answer_run",
            "created_at",
            "answered_at",
        ]


class MemorySearchSerializer(serializers.Serializer):
    agent = serializers.CharField(max_length=100)
    q = serializers.CharField(max_length=1000)


class MemoryEntrySerializer(serializers.Serializer):
    """One remembered excerpt: who said it, when, in which session."""

    id = serializers.CharField()
    author = serializers.CharField(allow_null=True)
    timestamp = serializers.CharField(allow_null=True)
    session = serializers.CharField()
    text = serializers.CharField()


class MemoryAddedSerializer(serializers.Serializer):
    remembered = serializers.IntegerField()
