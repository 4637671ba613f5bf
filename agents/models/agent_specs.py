"""The agents users can talk to: AgentSpec, defined in code or as a row, and each
saved version of a row agent (AgentVersion)."""

from django.conf import settings
from django.core.validators import MaxValueValidator
from django.db import models

# An agent's retention_days, at most: a hundred years, past which dates overflow
# (project/settings.py bounds TOOLCRIB_RETENTION_DAYS alike).
RETENTION_MAX_DAYS = 36_500
# A draft's name: its agent's name and this suffix, which no agent's name may hold
# (agents.agent_versions), so a draft never clashes with an agent.
DRAFT_SUFFIX = "--draft"
# A turn's history, in events, unless its agent says otherwise (agents.adk.history).
HISTORY_DEFAULT = 50


class AgentSpec(models.Model):
    """An agent users can talk to: defined in code (dotted path) or as a row."""

    class Kind(models.TextChoices):
        LLM = "llm", "LLM agent"
        SEQUENTIAL = "sequential", "Sequential"
        LOOP = "loop", "Loop"
        # ADK 2.x's Workflow graph: a code agent only (written in its module).
        WORKFLOW = "workflow", "Workflow"

    class Source(models.TextChoices):
        CODE = "code", "Code"
        DATABASE = "db", "Database"

    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    source = models.CharField(max_length=8, choices=Source, default=Source.DATABASE)
    dotted_path = models.CharField(max_length=255, blank=True)
    kind = models.CharField(max_length=16, choices=Kind, default=Kind.LLM)
    instruction = models.TextField(blank=True)
    model = models.CharField(
        max_length=200, blank=True, help_text="Blank: TOOLCRIB_DEFAULT_MODEL."
    )
    model_choices = models.JSONField(
        default=list,
        blank=True,
        help_text="Models its users may pick among in a session, besides its own "
        "(agents.model_picks); empty: no picker.",
    )
    toolsets = models.JSONField(
        default=list, blank=True, help_text="Names of code toolsets this agent uses."
    )
    tools = models.JSONField(
        default=list,
        blank=True,
        help_text="Single tools of toolsets the agent does not take whole: "
        '[{"toolset": ..., "tool": ...}] (agents.adk.tool_selection).',
    )
    groups = models.ManyToManyField(
        "auth.Group",
        blank=True,
        related_name="agents",
        help_text="Who may use the agent: members of these groups (and staff); "
        "none: everyone signed in.",
    )
    draft_of = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="draft",
        help_text="A draft: the unpublished edit of this agent, which only staff "
        "start sessions with (agents.agent_versions).",
    )
    sub_agents = models.ManyToManyField(
        "self", symmetrical=False, blank=True, related_name="parents"
    )
    max_iterations = models.PositiveIntegerField(null=True, blank=True)
    tool_choice = models.JSONField(
        null=True,
        blank=True,
        help_text='The first model call of each turn: "auto", "none", "required" or '
        '{"mode": "required", "required_function_name": ...}; blank: '
        "TOOLCRIB_FORCED_FIRST_TOOL. A message may choose otherwise.",
    )
    starters = models.JSONField(
        default=list,
        blank=True,
        help_text="Conversation starters: a few example prompts an empty session "
        "offers as buttons.",
    )
    history = models.PositiveIntegerField(
        null=True,
        blank=True,
        default=HISTORY_DEFAULT,
        help_text="How many of a session's latest events a turn reads and the model "
        "is sent, in whole turns (at least the last turn); blank: every event.",
    )
    retention_days = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MaxValueValidator(RETENTION_MAX_DAYS)],
        help_text="Days a session of this agent is kept after its last activity, "
        "then removed with everything in it (agents.retention); 0: kept forever; "
        "blank: TOOLCRIB_RETENTION_DAYS.",
    )
    a2a = models.BooleanField(
        default=False,
        help_text="Served over A2A: an agent card and a JSON-RPC endpoint at "
        "/a2a/<name>/ (agents.a2a, docs/a2a.md).",
    )
    is_active = models.BooleanField(default=True)
    missing = models.BooleanField(
        default=False, help_text="A code agent whose dotted path no longer loads."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class AgentVersion(models.Model):
    """One save of a row agent: its editable fields as they were saved, numbered."""

    class Status(models.TextChoices):
        PUBLISHED = "published", "Published"
        DRAFT = "draft", "Draft"

    agent = models.ForeignKey(
        AgentSpec, on_delete=models.CASCADE, related_name="versions"
    )
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status, default=Status.PUBLISHED)
    data = models.JSONField(help_text="The editable fields (agents.agent_versions).")
    note = models.CharField(max_length=200, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "number"], name="agent_version_number_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.agent.name} v{self.number}"
