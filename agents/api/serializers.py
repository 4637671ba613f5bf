"""API input and output shapes, validated here before any service runs; a message
the socket takes too is validated with its model in agents.inputs."""

import re

from django.conf import settings
from django.template.defaultfilters import filesizeformat
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from agents.adk.builder import (
    AgentBuildError,
    agent_for,
    code_agent_error,
    describe_agent,
    toolset_source,
)
from agents.adk.offline_matching import describe_matching
from agents.adk.providers import model_info
from agents.events.wire import run_stats
from agents.inputs import (
    HISTORY_MAX,
    STARTER_MAX_CHARS,
    STARTERS_MAX,
    parse_history,
    parse_retention_days,
    parse_starters,
    parse_tool_choice,
)
from agents.models import (
    RETENTION_MAX_DAYS,
    AgentSpec,
    Artifact,
    Request,
    Run,
    Session,
)
from agents.requests.kinds import CALL, RequestKind
from agents.session_list import Status, session_status

APP_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_-]*$")
# What an administrator may change on an agent defined in code.
CODE_AGENT_FIELDS = frozenset({"tool_choice", "retention_days", "a2a"})


class ModelInfoSerializer(serializers.Serializer):
    name = serializers.CharField()
    provider = serializers.CharField()
    offline = serializers.BooleanField()
    label = serializers.CharField()
    configured = serializers.BooleanField(
        help_text="Whether the provider's key (and base URL) are set."
    )
    missing = serializers.ListField(
        child=serializers.CharField(),
        help_text='Variables to set; alternatives read "A or B".',
    )


class OfflineSerializer(serializers.Serializer):
    """What the offline demo model understands, in a user's words."""

    summary = serializers.CharField()
    rules = serializers.ListField(child=serializers.CharField())


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": STARTER_MAX_CHARS},
        "maxItems": STARTERS_MAX,
    }
)
class StartersField(serializers.JSONField):
    """Conversation starters, read whole and checked by agents.inputs.parse_starters."""


@extend_schema_field(
    {"type": "integer", "nullable": True, "minimum": 1, "maximum": HISTORY_MAX}
)
class HistoryField(serializers.JSONField):
    """An agent's history, read whole and checked by agents.inputs.parse_history."""


@extend_schema_field(
    {"type": "integer", "nullable": True, "minimum": 0, "maximum": RETENTION_MAX_DAYS}
)
class RetentionDaysField(serializers.JSONField):
    """An agent's retention, read whole and checked by parse_retention_days."""


class AgentSerializer(serializers.ModelSerializer):
    """An agent as users see it: what it is, what it runs on, what it can do."""

    model_info = serializers.SerializerMethodField()
    starters = StartersField(
        required=False,
        help_text=f"Conversation starters: at most {STARTERS_MAX} one-line prompts "
        f"of at most {STARTER_MAX_CHARS} characters, shown as buttons in an empty "
        "session. A code agent's come from its code.",
    )
    offline = serializers.SerializerMethodField(
        help_text="On the offline demo model: what it understands; else null."
    )
    history = HistoryField(
        required=False,
        allow_null=True,
        help_text="How many of a session's latest events a turn reads and the model "
        f"is sent, 1 to {HISTORY_MAX}, in whole turns (at least the last turn); "
        "null: every event. A code agent's comes from its code.",
    )
    retention_days = RetentionDaysField(
        required=False,
        allow_null=True,
        help_text="Days a session of this agent is kept after its last activity, "
        f"then removed with everything in it, 0 (forever) to {RETENTION_MAX_DAYS}; null: "
        "TOOLCRIB_RETENTION_DAYS (docs/retention.md). Staff may set it on a code "
        "agent too.",
    )
    sub_agents = serializers.SlugRelatedField(
        slug_field="name", many=True, queryset=AgentSpec.objects.all(), required=False
    )
    tree = serializers.SerializerMethodField()
    available = serializers.SerializerMethodField(
        help_text="Whether sessions can start with it: active, and its code loads."
    )
    error = serializers.SerializerMethodField(
        help_text="Why an agent defined in code does not load (the module, the "
        "exception's type and message; staff only, who alone see such an agent); "
        "else null."
    )

    class Meta:
        model = AgentSpec
        fields = [
            "name",
            "description",
            "available",
            "error",
            "source",
            "kind",
            "instruction",
            "model",
            "model_info",
            "offline",
            "starters",
            "history",
            "toolsets",
            "sub_agents",
            "max_iterations",
            "tool_choice",
            "retention_days",
            "a2a",
            "is_active",
            "tree",
            "updated_at",
        ]
        read_only_fields = ["source", "updated_at"]

    def get_model_info(self, spec: AgentSpec) -> ModelInfoSerializer:
        return model_info(spec.model)

    @extend_schema_field(OfflineSerializer(allow_null=True))
    def get_offline(self, spec: AgentSpec) -> dict | None:
        return describe_matching() if model_info(spec.model)["offline"] else None

    def validate_starters(self, value) -> list[str]:
        try:
            return parse_starters(value)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def validate_retention_days(self, value) -> int | None:
        try:
            return parse_retention_days(value)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def validate_history(self, value) -> int | None:
        try:
            return parse_history(value)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def get_available(self, spec: AgentSpec) -> bool:
        return spec.is_active and not spec.missing

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_error(self, spec: AgentSpec) -> str | None:
        return code_agent_error(spec)

    def get_tree(self, spec: AgentSpec) -> dict:
        """The built ADK agent: names, models, tools and sub-agents as ADK sees them."""
        try:
            return describe_agent(agent_for(spec))
        except AgentBuildError as exc:
            return {"error": str(exc)}

    def validate_name(self, value: str) -> str:
        if not APP_NAME.match(value):
            raise serializers.ValidationError(
                "Start with a letter; use letters, digits, '_' and '-' only."
            )
        if value == "user":
            raise serializers.ValidationError("'user' is reserved by ADK.")
        return value

    def validate_toolsets(self, value):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise serializers.ValidationError("A list of toolset names.")
        known = getattr(settings, "TOOLCRIB_TOOLSETS", {})
        unknown = [name for name in value if name not in known]
        if unknown:  # or imported by an admin (an MCP server, an OpenAPI spec)
            imported = toolset_source().names()
            unknown = [name for name in unknown if name not in imported]
        if unknown:
            raise serializers.ValidationError(
                f"Unknown toolsets: {', '.join(unknown)}."
            )
        return value

    def validate_tool_choice(self, value):
        try:
            return parse_tool_choice(value)
        except ValueError as exc:
            raise serializers.ValidationError(f"Tool choice {exc}.") from None

    def validate(self, attrs):
        code = (
            self.instance is not None and self.instance.source == AgentSpec.Source.CODE
        )
        if code and set(attrs) <= CODE_AGENT_FIELDS:
            return attrs  # what an administrator chooses for a code agent
        kind = attrs.get("kind", getattr(self.instance, "kind", AgentSpec.Kind.LLM))
        if kind == AgentSpec.Kind.WORKFLOW and not code:
            raise serializers.ValidationError(
                {"kind": "A workflow is written in code: register its module."}
            )
        if kind == AgentSpec.Kind.LOOP and not attrs.get(
            "max_iterations", getattr(self.instance, "max_iterations", None)
        ):
            raise serializers.ValidationError(
                {"max_iterations": "A loop agent needs max_iterations."}
            )
        if (
            kind != AgentSpec.Kind.LLM
            and not attrs.get("sub_agents", None)
            and not (self.instance and self.instance.sub_agents.exists())
        ):
            raise serializers.ValidationError(
                {"sub_agents": f"A {kind} agent needs sub-agents."}
            )
        if code:
            raise serializers.ValidationError(
                "Agents defined in code are changed in code (but for their "
                "tool_choice)."
            )
        self._check_cycle(attrs.get("sub_agents", []))
        return attrs

    def _check_cycle(self, subs) -> None:
        if self.instance is None:
            return
        pending, seen = list(subs), set()
        while pending:
            spec = pending.pop()
            if spec.pk == self.instance.pk:
                raise serializers.ValidationError(
                    {"sub_agents": "An agent cannot contain itself."}
                )
            if spec.pk not in seen:
                seen.add(spec.pk)
                pending.extend(spec.sub_agents.all())


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
            "snippet",
        ]

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


@extend_schema_serializer(many=False)  # a page: one object, though the list's
class SessionPageSerializer(serializers.Serializer):
    """A page of my sessions; `next` is the next page's URL (by `cursor`, or a
    search's by `page`), null on the last."""

    results = SessionSerializer(many=True)
    next = serializers.URLField(allow_null=True)


class SessionCreateSerializer(serializers.Serializer):
    agent = serializers.CharField(max_length=100)


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
