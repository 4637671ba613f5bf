"""Agents, sessions, events, state and runs: what Toolcrib records about agents."""

import uuid

from django.conf import settings
from django.core.validators import MaxValueValidator
from django.db import models


def new_session_id() -> str:
    return str(uuid.uuid4())


# An agent's retention_days, at most: a hundred years, past which dates overflow
# (project/settings.py bounds TOOLCRIB_RETENTION_DAYS alike).
RETENTION_MAX_DAYS = 36_500
# A turn's history, in events, unless its agent says otherwise (agents.adk.history).
HISTORY_DEFAULT = 50


class AgentSpec(models.Model):
    """An agent users can talk to: defined in code (dotted path) or as a row."""

    class Kind(models.TextChoices):
        LLM = "llm", "LLM agent"
        SEQUENTIAL = "sequential", "Sequential"
        LOOP = "loop", "Loop"

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
    toolsets = models.JSONField(
        default=list, blank=True, help_text="Names of code toolsets this agent uses."
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


class Session(models.Model):
    """An ADK session: one conversation of one user with one agent (its app).

    `id` is Toolcrib's own, unique across apps and users: the API, URLs, sockets
    and foreign keys use it. `adk_id` is the id ADK knows the session by, unique
    per (app_name, user_id) only, as in ADK's session services; the two are equal
    unless ADK created the session with an id another session already had.
    """

    id = models.CharField(primary_key=True, max_length=128, default=new_session_id)
    adk_id = models.CharField(max_length=128, help_text="The session's id in ADK.")
    app_name = models.CharField(max_length=100, db_index=True)
    user_id = models.CharField(max_length=128, db_index=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="agent_sessions",
    )
    agent = models.ForeignKey(
        AgentSpec,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="sessions",
    )
    state = models.JSONField(default=dict, blank=True)
    last_seq = models.PositiveBigIntegerField(default=0)
    revision = models.PositiveBigIntegerField(default=0)
    last_update_time = models.FloatField(default=0.0)
    closed_at = models.DateTimeField(
        null=True, blank=True, help_text="Closed: added to memory, no new turns."
    )
    title = models.CharField(
        max_length=200,
        blank=True,
        help_text="What the session is about: its first message's start until "
        "renamed (agents.titles).",
    )
    archived_at = models.DateTimeField(
        null=True, blank=True, help_text="Archived: left out of the sessions list."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        indexes = [
            models.Index(fields=["app_name", "user_id"]),
            # A user's list and archive by last activity, a page a range of one
            # (agents.session_list, by key: `cursor`).
            models.Index(
                fields=["owner", "updated_at", "id"],
                condition=models.Q(archived_at__isnull=True),
                name="session_list",
            ),
            models.Index(
                fields=["owner", "updated_at", "id"],
                condition=models.Q(archived_at__isnull=False),
                name="session_archive",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "user_id", "adk_id"], name="session_unique_adk_id"
            )
        ]

    def __str__(self) -> str:
        return self.id


class Event(models.Model):
    """One stored event of a session, numbered by `seq` within the session.

    ADK events (is_adk) are what the session service returns to ADK; run lifecycle
    events (run_started, run_finished, error) are Toolcrib's own and only go to clients.
    """

    # No index of its own: both unique constraints below start with it, and serve
    # every read by session (and its cascade) while each insert updates one fewer.
    session = models.ForeignKey(
        Session, on_delete=models.CASCADE, related_name="events", db_index=False
    )
    seq = models.PositiveBigIntegerField()
    event_id = models.CharField(max_length=64)
    invocation_id = models.CharField(max_length=128, blank=True, db_index=True)
    author = models.CharField(max_length=128)
    kind = models.CharField(max_length=32)
    is_adk = models.BooleanField(default=True)
    timestamp = models.FloatField()
    data = models.JSONField()
    sender = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who sent a user message: the signed-in user it came from (never "
        "the client's word); null for events not from a person.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="event_unique_seq"),
            models.UniqueConstraint(
                fields=["session", "event_id"], name="event_unique_event_id"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq} {self.kind}"


class AppState(models.Model):
    """One `app:` state key, shared by every user of the app. Stored without prefix."""

    app_name = models.CharField(max_length=100)
    key = models.CharField(max_length=255)
    value = models.JSONField(null=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "key"], name="app_state_unique_key"
            )
        ]

    def __str__(self) -> str:
        return f"app:{self.key} ({self.app_name})"


class UserState(models.Model):
    """One `user:` state key, shared by one user's sessions of one app. Stored without prefix."""

    app_name = models.CharField(max_length=100)
    user_id = models.CharField(max_length=128)
    key = models.CharField(max_length=255)
    value = models.JSONField(null=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "user_id", "key"], name="user_state_unique_key"
            )
        ]

    def __str__(self) -> str:
        return f"user:{self.key} ({self.app_name}, {self.user_id})"


class Run(models.Model):
    """One turn: a user message (or function response) driven through ADK's Runner.

    It ends succeeded, failed, cancelled (stopped by a person: agents.turns.cancel),
    or waiting for a person (`waiting_for`); the turn an answer starts `resumes` the
    run that asked.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        # Ended with requests of its own pending (agents.requests): a person's
        # answer starts the Run that resumes it.
        WAITING = "waiting"
        # Stopped by a person while queued or running (agents.turns.cancel).
        CANCELLED = "cancelled"

    class WaitingFor(models.TextChoices):
        APPROVAL = "approval"
        CREDENTIAL = "credential"
        RESULT = "result"  # a long-running call's

    # Ended: the session's queue goes on (a waiting run holds up no turn).
    TERMINAL = (Status.SUCCEEDED, Status.FAILED, Status.WAITING, Status.CANCELLED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: (session, status, created_at) below starts with it.
    session = models.ForeignKey(
        Session, on_delete=models.CASCADE, related_name="runs", db_index=False
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="runs"
    )
    status = models.CharField(max_length=16, choices=Status, default=Status.QUEUED)
    text = models.TextField(blank=True)
    message = models.JSONField(
        null=True, blank=True, help_text="The ADK Content sent, when not plain text."
    )
    invocation_id = models.CharField(max_length=128, blank=True)
    tool_choice = models.JSONField(
        null=True,
        blank=True,
        help_text="The message's tool choice for the first model call, over the "
        "agent's (agents.inputs.ToolChoice, as stored).",
    )
    error = models.TextField(blank=True)
    waiting_for = models.CharField(
        max_length=16,
        choices=WaitingFor,
        blank=True,
        help_text="What a waiting run waits for; blank unless waiting.",
    )
    resumes = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="resumed_by",
        help_text="The run whose request this run's answer resumes.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    total_tokens = models.PositiveIntegerField(default=0)
    handoffs = models.JSONField(
        default=list,
        blank=True,
        help_text="Transfers and escalations: kind, from, to, reason, event_id.",
    )
    model = models.CharField(
        max_length=200,
        blank=True,
        help_text="The root agent's model name, as resolved for the turn.",
    )
    model_calls = models.PositiveIntegerField(default=0)
    tool_calls = models.PositiveIntegerField(default=0)
    requeues = models.PositiveSmallIntegerField(
        default=0,
        help_text="How often the run was queued again, its first delivery having "
        "been taken by a process that died before the turn started "
        "(agents.turns.sweep).",
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["session", "status", "created_at"]),
            # /metrics' queued turns, counted at every scrape: only queued runs.
            models.Index(
                fields=["status"],
                condition=models.Q(status="queued"),
                name="run_queued",
            ),
            # The sweep of runs a dead process left (agents.turns.sweep), on every
            # worker a few times a minute: only the unfinished ones, oldest first.
            models.Index(
                fields=["status", "created_at"],
                condition=models.Q(status__in=["queued", "running"]),
                name="run_unfinished",
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.id} ({self.status})"

    # run_unfinished's condition, written as it is, for `.extra()`: SQLite matches
    # a bound parameter to a partial index's `status = 'x'` (it prepares the
    # statement again for its value) but never an `IN (?, ?)`, where a
    # `filter(status__in=...)` reads every run instead; PostgreSQL's generic
    # plans cannot use it either.
    UNFINISHED_SQL = "agents_run.status IN ('queued', 'running')"

    @property
    def is_finished(self) -> bool:
        return self.status in self.TERMINAL


class RunTotal(models.Model):
    """What the runs of one hour used: per hour (UTC) of their creation, user,
    agent and how they ended, the runs that ended and their tokens.

    Added to as each run ends, in the transaction that ends it (agents.usage), and
    never by reading the runs again: usage reads these rows, whatever the number
    of runs. A run counts in the hour it was created, as usage always counted it.
    Rows outlive what they count (a deleted user, session or run), so `user_id`
    is a plain number, not a foreign key.
    """

    hour = models.DateTimeField(help_text="The hour's start, UTC.")
    user_id = models.IntegerField(help_text="The run's user (kept after deletion).")
    agent = models.CharField(max_length=100, help_text="The session's agent (app).")
    outcome = models.CharField(max_length=16, help_text="The run's ending status.")
    runs = models.BigIntegerField(default=0)
    prompt_tokens = models.BigIntegerField(default=0)
    completion_tokens = models.BigIntegerField(default=0)
    total_tokens = models.BigIntegerField(default=0)
    cost_micros = models.BigIntegerField(
        db_default=0,
        help_text="Cost in millionths of the billing currency: 0 until runs "
        "carry a cost (they do not yet).",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hour", "user_id", "agent", "outcome"], name="runtotal_key"
            )
        ]
        # A user's own usage, by time (staff read by time: the key's index).
        indexes = [models.Index(fields=["user_id", "hour"], name="runtotal_user")]

    def __str__(self) -> str:
        return f"{self.hour} {self.agent} {self.outcome}: {self.runs} runs"


class RunSpan(models.Model):
    """One OpenTelemetry span of a run's turn, as agents.observability recorded it.

    A turn's spans are written together, in one INSERT, when the turn ends (also a
    failed, cancelled or waiting one), and only while TOOLCRIB_TRACES is on.
    """

    class Kind(models.TextChoices):
        TURN = "turn"
        AGENT = "agent"
        MODEL = "model"
        TOOL = "tool"
        GOVERNANCE = "governance"
        EXECUTE = "execute"
        STORE = "store"
        PUBLISH = "publish"
        WAIT = "wait"
        OTHER = "other"

    class Status(models.TextChoices):
        OK = "ok"
        ERROR = "error"

    # No index of its own: the (run, start) index starts with it.
    run = models.ForeignKey(
        Run, on_delete=models.CASCADE, related_name="spans", db_index=False
    )
    span_id = models.CharField(max_length=16)
    parent_id = models.CharField(max_length=16, blank=True)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind, default=Kind.OTHER)
    start = models.DateTimeField()
    duration_ms = models.FloatField()
    status = models.CharField(max_length=8, choices=Status, default=Status.OK)
    attributes = models.JSONField(
        default=dict,
        blank=True,
        help_text="The span's attributes, redacted by agents.redaction's rule.",
    )

    class Meta:
        indexes = [models.Index(fields=["run", "start"])]

    def __str__(self) -> str:
        return f"span {self.span_id} {self.name}"


class Budget(models.Model):
    """A daily token budget: one user's own, or shared by the members of one group.

    A day runs midnight to midnight in TIME_ZONE; agents.usage counts it.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="token_budgets",
    )
    group = models.ForeignKey(
        "auth.Group",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="token_budgets",
    )
    daily_tokens = models.PositiveBigIntegerField(
        help_text="Tokens (prompt + completion) per day; a group's members share them."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(user__isnull=False, group__isnull=True)
                | models.Q(user__isnull=True, group__isnull=False),
                name="budget_user_xor_group",
            ),
            models.UniqueConstraint(
                fields=["user"],
                condition=models.Q(user__isnull=False),
                name="budget_unique_user",
            ),
            models.UniqueConstraint(
                fields=["group"],
                condition=models.Q(group__isnull=False),
                name="budget_unique_group",
            ),
        ]

    def __str__(self) -> str:
        owner = f"user {self.user}" if self.user_id else f"group {self.group}"
        return f"{owner}: {self.daily_tokens} tokens/day"


class Artifact(models.Model):
    """One version of an ADK artifact; its content lives in the artifacts storage.

    `session_key` is the session id, or "" for a `user:` artifact, which belongs to
    the user across sessions. `part` is the ADK Part without its payload (text or
    inline bytes), which is the file at `storage_path`.
    """

    app_name = models.CharField(max_length=100)
    user_id = models.CharField(max_length=128)
    session_key = models.CharField(max_length=128, blank=True)
    filename = models.CharField(max_length=512)
    version = models.PositiveIntegerField()
    mime_type = models.CharField(max_length=255, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    storage_path = models.CharField(max_length=512, blank=True)
    part = models.JSONField(default=dict)
    custom_metadata = models.JSONField(default=dict, blank=True)
    create_time = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["app_name", "user_id", "session_key", "filename", "version"]
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "user_id", "session_key", "filename", "version"],
                name="artifact_unique_version",
            )
        ]
        indexes = [models.Index(fields=["app_name", "user_id", "session_key"])]

    def __str__(self) -> str:
        return f"{self.filename} v{self.version}"


class MemoryEntry(models.Model):
    """One remembered event of a user's past session, searchable by its text.

    A deleted memory stays as a row with `is_deleted`, so adding its session to
    memory again does not bring it back (as ADK's in-memory service behaves).
    """

    app_name = models.CharField(max_length=100)
    user_id = models.CharField(max_length=128)
    session_key = models.CharField(max_length=128)
    event_id = models.CharField(max_length=64)
    author = models.CharField(max_length=128, blank=True)
    timestamp = models.FloatField()
    content = models.JSONField()
    text = models.TextField()
    custom_metadata = models.JSONField(default=dict, blank=True)
    is_deleted = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "memory entries"
        ordering = ["app_name", "user_id", "timestamp"]
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "user_id", "session_key", "event_id"],
                name="memory_unique_event",
            )
        ]
        indexes = [models.Index(fields=["app_name", "user_id", "is_deleted"])]

    def __str__(self) -> str:
        return f"{self.author}: {self.text[:40]}"


class Request(models.Model):
    """A pause for a person: a call, an approval or a credential request (agents.requests).

    Keyed by the pausing function call's id within its session (`call_id`): a
    long-running tool's call, ADK's `adk_request_confirmation` or its
    `adk_request_credential`. The answer goes back as that call's FunctionResponse
    in a new Run (`answer_run`). `answer_group` names who answers besides the
    session owner: blank means the owner (or staff, but never for a credential);
    else that group's members (or staff), never the requester.

    An approval of a call through the MCP gateway has no session and no Run: its
    `caller` asked, through the MCP client `client`; its answer starts no Run,
    the gateway runs the held call (toolsets.gateway.approvals) and marks it
    `resumed_at`, once.
    """

    class Kind(models.TextChoices):
        CALL = "call"
        APPROVAL = "approval"
        CREDENTIAL = "credential"

    class Status(models.TextChoices):
        PENDING = "pending"
        ANSWERED = "answered"
        APPROVED = "approved"
        REJECTED = "rejected"
        EXPIRED = "expired"

    kind = models.CharField(max_length=16, choices=Kind)
    status = models.CharField(max_length=16, choices=Status, default=Status.PENDING)
    # Deleted with its session: a request outliving it could never be answered.
    # None for a gateway call's approval, which `caller` asked.
    session = models.ForeignKey(
        Session,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="requests",
    )
    caller = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Who asked, for a request with no session (an MCP gateway call).",
    )
    client = models.CharField(
        max_length=100, blank=True, help_text="The MCP client that made the call."
    )
    args_digest = models.CharField(
        max_length=64,
        blank=True,
        help_text="A keyed digest of the held call's arguments, as sent (`args` is "
        "redacted): the same call made again matches it.",
    )
    resumed_at = models.DateTimeField(
        null=True, blank=True, help_text="When the approved gateway call ran."
    )
    run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    call_id = models.CharField(
        max_length=128, help_text="The id of the function call that pauses."
    )
    tool_call_id = models.CharField(
        max_length=128, blank=True, help_text="The id of the tool's own call."
    )
    tool_name = models.CharField(max_length=255, blank=True)
    args = models.JSONField(default=dict, blank=True)
    agent = models.CharField(max_length=128, blank=True)
    invocation_id = models.CharField(max_length=128, blank=True)
    hint = models.TextField(blank=True)
    answer_group = models.CharField(
        max_length=150,
        blank=True,
        help_text="Who answers besides the owner: blank, the owner (or staff).",
    )
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    answered_at = models.DateTimeField(null=True, blank=True)
    answer_run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="Answered as expired after this; blank: never."
    )
    response = models.JSONField(
        null=True, blank=True, help_text="A call's posted result; never a secret."
    )
    # A credential request's: what to ask for, never a secret.
    credential_key = models.CharField(max_length=255, blank=True)
    scheme = models.CharField(
        max_length=32, blank=True, help_text="apiKey, http, oauth2, openIdConnect."
    )
    auth_config = models.JSONField(
        default=dict, blank=True, help_text="The AuthConfig asked, secrets blanked."
    )
    # An OAuth2 sign-in's PKCE code verifier: blanked in auth_config, needed again
    # when the provider's code is exchanged (agents.oauth2).
    sealed_verifier = models.TextField(
        blank=True, editable=False, help_text="The PKCE code verifier, encrypted."
    )
    # What a person reads: the tool's own description, from its catalog entry (the
    # approval gate's payload) or its ADK declaration, as recorded.
    description = models.TextField(
        blank=True, help_text="What the tool does, first line of its description."
    )
    self_approval = models.BooleanField(
        default=False,
        help_text="The catalog lets the requester decide it herself, and allow the "
        "tool for the rest of the session.",
    )
    comment = models.TextField(blank=True, help_text="The decider's comment.")
    # An approval's: how many people of its answer group must approve it (the
    # two-person rule, agents.requests.quorum); each approval a RequestApproval.
    approvals_required = models.PositiveSmallIntegerField(
        default=1,
        help_text="Approvals by different people it needs before its call runs.",
    )
    catalog_tool = models.CharField(
        max_length=301,
        blank=True,
        help_text="The catalog tool an approval asks about, when the catalog asked.",
    )
    approved_args = models.JSONField(
        null=True,
        blank=True,
        help_text="The arguments an approver changed the call to (redacted); blank: "
        "approved as asked.",
    )
    args_edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who changed the call's arguments before approving it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "call_id"], name="request_unique_call"
            ),
            models.CheckConstraint(
                condition=models.Q(session__isnull=False)
                | models.Q(caller__isnull=False),
                name="request_has_requester",
            ),
        ]
        indexes = [
            # The inbox: pending requests of a kind, by who answers them.
            models.Index(fields=["kind", "status", "answer_group"]),
            # The expiry sweep: pending requests past their time.
            models.Index(fields=["status", "expires_at"]),
            # The inbox and its badge, newest first: only the pending requests, few
            # whatever the history. With statistics SQLite takes a status for a
            # fifth of the table and would read every request instead.
            models.Index(
                fields=["id"],
                condition=models.Q(status="pending"),
                name="request_pending",
            ),
            # A gateway call made again: its caller's held calls of one tool.
            models.Index(fields=["caller", "tool_name", "args_digest"]),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.tool_name} {self.call_id} ({self.status})"

    @property
    def requester(self):
        """Who asked: the session's owner, or a gateway call's caller."""
        return self.session.owner if self.session_id else self.caller

    @property
    def requester_id(self) -> int | None:
        return self.session.owner_id if self.session_id else self.caller_id


class RequestApproval(models.Model):
    """One person's approval of a request that needs several (the two-person rule):
    each approver once, never its requester (agents.requests.quorum)."""

    request = models.ForeignKey(
        Request, on_delete=models.CASCADE, related_name="approvals"
    )
    approver = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["request", "approver"], name="request_approval_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.approver_id} approved {self.request_id}"


class StandingApproval(models.Model):
    """A requester's "always allow for me": every later call of one tool in one
    session is approved at once (agents.requests.standing), where the catalog
    lets her decide its calls herself."""

    session = models.ForeignKey(
        Session, on_delete=models.CASCADE, related_name="standing_approvals"
    )
    tool_name = models.CharField(max_length=255)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["session", "tool_name"], name="standing_approval_unique_tool"
            )
        ]

    def __str__(self) -> str:
        return f"{self.tool_name} in {self.session_id}"


class Credential(models.Model):
    """One user's credential for one credential key of one app, encrypted.

    Keyed as ADK's credential services key it: (app, user, credential key), so a
    credential given to one agent is never handed to another. `sealed` is a Fernet
    token of the AuthCredential's JSON (agents.adk.credentials); nothing else here
    is secret, and nothing outside agents.adk.credentials reads `sealed`.
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="tool_credentials",
    )
    app_name = models.CharField(
        max_length=100, help_text="The app (agent) the credential was given to."
    )
    key = models.CharField(max_length=255, help_text="The AuthConfig's credential_key.")
    auth_type = models.CharField(max_length=32, help_text="apiKey, http, oauth2, ...")
    scheme = models.CharField(max_length=32, blank=True)
    agent = models.CharField(max_length=128, blank=True)
    tool_name = models.CharField(max_length=255, blank=True)
    sealed = models.TextField(editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "app_name", "key"],
                name="credential_unique_key_per_owner_app",
            )
        ]

    def __str__(self) -> str:
        return f"{self.key} of user {self.owner_id} in {self.app_name}"


class NoticePreference(models.Model):
    """Which channels tell one user of a new request of one kind (agents.notices).

    No row for a kind: the defaults (agents.notices.preferences.DEFAULTS)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    kind = models.CharField(max_length=16, choices=Request.Kind)
    mail = models.BooleanField(help_text="A mail to the user's address.")
    webhook = models.BooleanField(
        help_text="A message to the webhook destinations staff set up for the user."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "kind"], name="notice_preference_unique_kind"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} notices of user {self.user_id}"


class WebhookDestination(models.Model):
    """Where a webhook notice goes, set up by staff (agents.notices).

    A destination of a user (`user`) is hers: it follows her preferences and its
    messages carry her approve / reject links. Else it is a team's: every request
    of its `kinds` (answered by `group`, if set), with a link to the inbox only.
    """

    class Format(models.TextChoices):
        GENERIC = "generic"
        SLACK = "slack"
        TEAMS = "teams"

    name = models.CharField(max_length=100, unique=True)
    # A Slack or Teams webhook's URL is a credential: kept encrypted, its host shown.
    sealed_url = models.TextField(editable=False, help_text="The URL, encrypted.")
    host = models.CharField(max_length=255, help_text="The URL's host, to show.")
    format = models.CharField(max_length=16, choices=Format, default=Format.GENERIC)
    sealed_secret = models.TextField(
        blank=True,
        editable=False,
        help_text="The generic format's signing secret, encrypted; blank: unsigned.",
    )
    kinds = models.JSONField(
        default=list, blank=True, help_text="The request kinds it hears of."
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Whose destination it is; blank: a team's.",
    )
    group = models.CharField(
        max_length=150,
        blank=True,
        help_text="A team's: only requests this group answers; blank: every one.",
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Delivery(models.Model):
    """One notice of a request to one person or destination, and its attempts: the
    delivery log (agents.notices.sending)."""

    class Channel(models.TextChoices):
        MAIL = "mail"
        WEBHOOK = "webhook"

    class Status(models.TextChoices):
        QUEUED = "queued"  # waits for its next attempt, at next_attempt_at
        SENDING = "sending"  # an attempt is under way until next_attempt_at
        SENT = "sent"
        FAILED = "failed"  # every attempt failed
        SKIPPED = "skipped"  # the request ended before the notice went

    request = models.ForeignKey(
        Request, on_delete=models.CASCADE, related_name="deliveries"
    )
    channel = models.CharField(max_length=16, choices=Channel)
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Whom it tells (her links in it); blank: a team's destination.",
    )
    destination = models.ForeignKey(
        WebhookDestination,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="deliveries",
    )
    address = models.CharField(
        max_length=254, help_text="The mail address, or the destination's name."
    )
    status = models.CharField(max_length=16, choices=Status, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            # The sender: deliveries due for an attempt.
            models.Index(fields=["status", "next_attempt_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.channel} of request {self.request_id} to {self.address}"


class NoticeLink(models.Model):
    """An approve or reject link in a notice: one-time, bound to one request and
    one approver, expiring with the request (agents.notices.links). Only the
    token's digest is kept."""

    digest = models.CharField(max_length=64, unique=True)
    request = models.ForeignKey(Request, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    approved = models.BooleanField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        verb = "approve" if self.approved else "reject"
        return f"{verb} link of request {self.request_id} for user {self.user_id}"


class Lease(models.Model):
    """A job that one process at a time may run, across every process and machine:
    the holder claims the row by a conditional UPDATE and renews it while it works;
    a holder that died loses it when `expires_at` passes (agents.retention.lease)."""

    name = models.CharField(primary_key=True, max_length=64)
    holder = models.CharField(max_length=128, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.name} held by {self.holder or 'nobody'}"
