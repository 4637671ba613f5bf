"""An agent's API shapes: as users see it, and as staff build it (agents.agent_versions
keeps every save as a version)."""

import re

from django.conf import settings
from django.contrib.auth.models import Group
from drf_spectacular.utils import extend_schema_field
from google.adk.models import LLMRegistry
from rest_framework import serializers

from agents.adk.builder import (
    AgentBuildError,
    agent_for,
    code_agent_error,
    describe_agent,
    resolve_toolset,
    toolset_source,
)
from agents.adk.offline_matching import describe_matching
from agents.adk.providers import (
    OFFLINE_PREFIX,
    connection_problem,
    effective_model,
    model_info,
)
from agents.adk.tool_selection import tool_names
from agents.connections import unknown_model
from agents.inputs import (
    HISTORY_MAX,
    STARTER_MAX_CHARS,
    STARTERS_MAX,
    parse_history,
    parse_retention_days,
    parse_starters,
    parse_tool_choice,
)
from agents.model_table import connection_names
from agents.models import DRAFT_SUFFIX, RETENTION_MAX_DAYS, AgentSpec, AgentVersion

APP_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_-]*$")
INSTRUCTION_MAX = 100_000
DESCRIPTION_MAX = 2_000
# Room for DRAFT_SUFFIX in AgentSpec.name's 100 characters.
NAME_MAX = 100 - len(DRAFT_SUFFIX)
TOOLS_MAX = 200
MODEL_CHOICES_MAX = 20
# What an administrator may change on an agent defined in code.
CODE_AGENT_FIELDS = frozenset({"tool_choice", "retention_days", "groups", "a2a"})
# What staff may change on a row agent (its name is kept: its sessions use it).
EDITABLE_FIELDS = frozenset(
    {
        "description",
        "kind",
        "instruction",
        "model",
        "model_choices",
        "toolsets",
        "tools",
        "sub_agents",
        "max_iterations",
        "tool_choice",
        "starters",
        "history",
        "retention_days",
        "groups",
        "a2a",
        "is_active",
    }
)


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
    problem = serializers.CharField(
        help_text="Why the model cannot run, in words (e.g. no connection of "
        "that name); empty when nothing is known to be wrong."
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


@extend_schema_field(
    {
        "type": "array",
        "maxItems": TOOLS_MAX,
        "items": {
            "type": "object",
            "properties": {"toolset": {"type": "string"}, "tool": {"type": "string"}},
            "required": ["toolset", "tool"],
        },
    }
)
class ToolsField(serializers.JSONField):
    """Single tools of toolsets, read whole and checked by parse_tools."""


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": 260},
        "maxItems": MODEL_CHOICES_MAX,
    }
)
class ModelChoicesField(serializers.JSONField):
    """The models an agent's users may pick, read whole and checked by
    parse_model_choices."""


def parse_model_choices(value) -> list[str]:
    """Known model names, without repeats, else ValidationError (each one's why)."""
    shape = f"A list of at most {MODEL_CHOICES_MAX} model names."
    if not isinstance(value, list) or len(value) > MODEL_CHOICES_MAX:
        raise serializers.ValidationError(shape)
    names: list[str] = []
    errors: list[str] = []
    for item in value:
        if not isinstance(item, str) or not 0 < len(item.strip()) <= 260:
            raise serializers.ValidationError(shape)
        name = item.strip()
        why = unknown_model(name) if not name.endswith("/*") else "Name one model."
        if why:
            errors.append(why)
        elif name not in names:
            names.append(name)
    if errors:
        raise serializers.ValidationError(errors)
    return names


def parse_tools(value) -> list[dict[str, str]]:
    """A list of {"toolset", "tool"} names, without repeats, else ValidationError."""
    shape = 'A list of {"toolset": ..., "tool": ...} names.'
    if not isinstance(value, list) or len(value) > TOOLS_MAX:
        raise serializers.ValidationError(f"{shape} At most {TOOLS_MAX}.")
    entries: list[dict[str, str]] = []
    for item in value:
        ok = (
            isinstance(item, dict)
            and set(item) == {"toolset", "tool"}
            and all(isinstance(v, str) and 0 < len(v) <= 200 for v in item.values())
        )
        if not ok:
            raise serializers.ValidationError(shape)
        if item not in entries:
            entries.append({"toolset": item["toolset"], "tool": item["tool"]})
    return entries


def toolset_tool_names(name: str, errors: list[str]) -> set[str] | None:
    """The tool names of toolset `name`; None (and an error noted) if it is
    unknown or cannot list its tools now."""
    try:
        return tool_names(resolve_toolset(name))
    except AgentBuildError as exc:
        errors.append(f"Unknown toolset {name!r}: {exc}.")
    # Listing runs the toolset's own code (an MCP server's, say): any failure is
    # the toolset's, and reads as one, not as a 500.
    except Exception as exc:  # noqa: BLE001
        errors.append(f"The toolset {name!r} cannot list its tools now: {exc}")
    return None


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
        slug_field="name",
        many=True,
        queryset=AgentSpec.objects.filter(draft_of__isnull=True),
        required=False,
    )
    model_choices = ModelChoicesField(
        required=False,
        help_text="Models its users may pick among in a session, besides its own "
        "`model` (a picker shows those granted to them); []: no picker. An agent "
        "of rows that calls a model (kind llm) only.",
    )
    tools = ToolsField(
        required=False,
        help_text="Single tools of toolsets the agent does not take whole: "
        '[{"toolset": "math", "tool": "calculate"}]. Only these of the toolset '
        "are offered to the model.",
    )
    groups = serializers.SlugRelatedField(
        slug_field="name",
        many=True,
        queryset=Group.objects.all(),
        required=False,
        help_text="Who may use the agent: members of these groups (and staff). "
        "None: everyone signed in.",
    )
    archived = serializers.SerializerMethodField(
        help_text="Archived: no new sessions; its sessions stay readable."
    )
    editable = serializers.SerializerMethodField(
        help_text="The fields staff may change: all of a row agent's; of an agent "
        "defined in code, only these. None for anyone else."
    )
    draft_of = serializers.SlugRelatedField(
        slug_field="name",
        read_only=True,
        allow_null=True,
        help_text="A draft: the agent it is the draft of; else null.",
    )
    has_draft = serializers.SerializerMethodField(
        help_text="Whether an unpublished draft exists (staff try it in a session; "
        "false for anyone else)."
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
            "model_choices",
            "model_info",
            "offline",
            "starters",
            "history",
            "toolsets",
            "tools",
            "sub_agents",
            "max_iterations",
            "tool_choice",
            "retention_days",
            "groups",
            "a2a",
            "is_active",
            "archived",
            "editable",
            "draft_of",
            "has_draft",
            "tree",
            "updated_at",
        ]
        read_only_fields = ["source", "updated_at"]
        # validate_name says it in words, case-insensitively.
        extra_kwargs = {
            "name": {"validators": []},
            # Sent with every model call: a pasted book is a mistake, and a cost.
            "instruction": {"max_length": INSTRUCTION_MAX},
            "description": {"max_length": DESCRIPTION_MAX},
        }

    def to_representation(self, spec: AgentSpec) -> dict:
        data = super().to_representation(spec)
        request = self.context.get("request")
        if request is None or not request.user.is_staff:
            # Who may use it, and the builder's state, are staff's business.
            data.pop("groups")
            data.update(editable=[], draft_of=None, has_draft=False)
        return data

    def get_archived(self, spec: AgentSpec) -> bool:
        return not spec.is_active

    def get_editable(self, spec: AgentSpec) -> list[str]:
        if spec.source == AgentSpec.Source.CODE:
            return sorted(CODE_AGENT_FIELDS)
        return sorted(EDITABLE_FIELDS)

    def get_has_draft(self, spec: AgentSpec) -> bool:
        return hasattr(spec, "draft")  # selected with the agent (agent_views)

    def validate_model(self, value: str) -> str:
        value = value.strip()
        if not value:
            return value
        try:
            LLMRegistry.resolve(value)
        except ValueError:
            raise serializers.ValidationError(
                f"No provider serves the model {value!r}: name it as the provider "
                'does, e.g. "openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", '
                '"gemini-2.5-flash", "ollama_chat/llama3.2" or "offline/demo".'
            ) from None
        if problem := connection_problem(value):
            raise serializers.ValidationError(problem)
        return value

    def validate_model_choices(self, value) -> list[str]:
        return parse_model_choices(value)

    def validate_tools(self, value) -> list[dict[str, str]]:
        entries = parse_tools(value)
        errors = []
        listed: dict[str, set[str] | None] = {}
        for entry in entries:
            toolset, tool = entry["toolset"], entry["tool"]
            if toolset not in listed:
                listed[toolset] = toolset_tool_names(toolset, errors)
            known = listed[toolset]
            if known is not None and tool not in known:
                errors.append(f"Unknown tool {tool!r} in toolset {toolset!r}.")
        if errors:
            raise serializers.ValidationError(errors)
        return entries

    def get_model_info(self, spec: AgentSpec) -> ModelInfoSerializer:
        # The connections' names are read once for a whole list of agents.
        if "connection_names" not in self.context:
            self.context["connection_names"] = connection_names()
        return model_info(spec.model, connections=self.context["connection_names"])

    @extend_schema_field(OfflineSerializer(allow_null=True))
    def get_offline(self, spec: AgentSpec) -> dict | None:
        offline = effective_model(spec.model).startswith(OFFLINE_PREFIX)
        return describe_matching() if offline else None

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
        if self.instance is not None and value != self.instance.name:
            raise serializers.ValidationError(
                "An agent keeps its name (its sessions use it): duplicate it under "
                "a new name instead."
            )
        if len(value) > NAME_MAX:
            raise serializers.ValidationError(f"At most {NAME_MAX} characters.")
        if DRAFT_SUFFIX in value:
            raise serializers.ValidationError(
                f"{DRAFT_SUFFIX!r} is kept for drafts; choose another name."
            )
        if not APP_NAME.match(value):
            raise serializers.ValidationError(
                "Start with a letter; use letters, digits, '_' and '-' only."
            )
        if value == "user":
            raise serializers.ValidationError("'user' is reserved by ADK.")
        taken = AgentSpec.objects.filter(name__iexact=value)
        if self.instance is not None:
            taken = taken.exclude(pk=self.instance.pk)
        if (other := taken.values_list("name", flat=True).first()) is not None:
            raise serializers.ValidationError(
                f"An agent is named {other} already: choose another name."
            )
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

    def validate_sub_agents(self, value: list[AgentSpec]) -> list[AgentSpec]:
        me = self._identity()
        if me is not None and any(sub.pk == me for sub in value):
            raise serializers.ValidationError("An agent cannot contain itself.")
        return value

    def _identity(self) -> int | None:
        """The agent this serializer edits: a draft stands for its agent."""
        if self.instance is None:
            return None
        return self.instance.draft_of_id or self.instance.pk

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
                "Agents defined in code are changed in code, but for who may use "
                "them (groups), their tool_choice and retention_days."
            )
        self._check_cycle(attrs.get("sub_agents", []))
        return attrs

    def _check_cycle(self, subs) -> None:
        me = self._identity()
        if me is None:
            return
        pending, seen = list(subs), set()
        while pending:
            spec = pending.pop()
            if spec.pk == me:
                raise serializers.ValidationError(
                    {
                        "sub_agents": f"A cycle: {spec.name} would contain itself "
                        "through its sub-agents."
                    }
                )
            if spec.pk not in seen:
                seen.add(spec.pk)
                pending.extend(spec.sub_agents.all())


class AgentVersionSerializer(serializers.ModelSerializer):
    """One saved version of an agent: its fields as saved, who saved it, when."""

    author = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = AgentVersion
        fields = ["number", "status", "note", "author", "created_at", "data"]


class VersionDiffQuerySerializer(serializers.Serializer):
    """Two versions to compare, in either order."""

    a = serializers.IntegerField(min_value=1, help_text="One version's number.")
    b = serializers.IntegerField(min_value=1, help_text="The other's.")


class FieldChangeSerializer(serializers.Serializer):
    field = serializers.CharField()
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)


class VersionDiffSerializer(serializers.Serializer):
    """What changed between two versions; the instruction also line by line."""

    a = serializers.IntegerField(help_text="The older version's number.")
    b = serializers.IntegerField(help_text="The newer version's number.")
    changes = FieldChangeSerializer(many=True)
    instruction_diff = serializers.ListField(
        child=serializers.CharField(), help_text="A unified diff, one line each."
    )


class RollbackSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1)


class DuplicateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=NAME_MAX, help_text="The copy's name.")


class AgentOptionsSerializer(serializers.Serializer):
    """What the agent builder offers to pick from."""

    models = serializers.ListField(child=serializers.CharField())
    toolsets = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField(), allow_null=True),
        help_text="Toolset -> its tools; null where listing would connect to a "
        "server (an import): take it whole, or name its tools.",
    )
    agents = serializers.ListField(child=serializers.CharField())
    groups = serializers.ListField(child=serializers.CharField())
