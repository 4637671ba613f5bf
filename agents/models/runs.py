"""Runs (one turn each), their spans, what they used by the hour, and the daily
token budgets they are counted against."""

import uuid

from django.conf import settings
from django.db import models

from agents.models.sessions import Session


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
    cost_micros = models.BigIntegerField(
        default=0,
        help_text="What its tokens cost, in millionths of the billing currency, "
        "at its model's prices (agents.usage.cost_of) as it ended.",
    )
    model_calls = models.PositiveIntegerField(default=0)
    tool_calls = models.PositiveIntegerField(default=0)
    eval = models.BooleanField(
        default=False,
        help_text="A turn of an eval run (evals): left out of budgets and usage totals.",
    )
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
            # A session's latest run (its status in the list and when opened), one
            # step down however many runs it has had.
            models.Index(
                fields=["session", "-created_at", "-id"], name="run_session_latest"
            ),
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
            # Staff's list in the admin, newest first (project.admin_lists).
            models.Index(fields=["-created_at", "-id"], name="run_newest"),
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
    agent, model and how they ended, the runs that ended, their tokens and cost.

    Added to as each run ends, in the transaction that ends it (agents.usage), and
    never by reading the runs again: usage reads these rows, whatever the number
    of runs. A run counts in the hour it was created, as usage always counted it.
    Rows outlive what they count (a deleted user, session or run), so `user_id`
    is a plain number, not a foreign key; below zero, a row of every user's runs of
    a period (project.periods: -4 a week, -1 a day, -3 six hours, -2 an hour;
    `hour` the period's start).
    """

    hour = models.DateTimeField(help_text="The hour's start, UTC.")
    user_id = models.IntegerField(help_text="The run's user (kept after deletion).")
    agent = models.CharField(max_length=100, help_text="The session's agent (app).")
    model = models.CharField(
        max_length=200,
        default="",
        blank=True,
        help_text="The run's model (Run.model); blank for totals kept before "
        "models were counted apart.",
    )
    outcome = models.CharField(max_length=16, help_text="The run's ending status.")
    runs = models.BigIntegerField(default=0)
    prompt_tokens = models.BigIntegerField(default=0)
    completion_tokens = models.BigIntegerField(default=0)
    total_tokens = models.BigIntegerField(default=0)
    cost_micros = models.BigIntegerField(
        db_default=0,
        help_text="Cost in millionths of the billing currency, at the model's "
        "prices as each run ended (0 for a model without a price).",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hour", "user_id", "agent", "model", "outcome"],
                name="runtotal_key",
            )
        ]
        # A user's own usage, by time, and every user's periods; staff's usage by
        # user (a month of every user's hours) read from the index alone.
        indexes = [
            models.Index(
                fields=[
                    "user_id",
                    "hour",
                    "runs",
                    "prompt_tokens",
                    "completion_tokens",
                    "total_tokens",
                    "cost_micros",
                ],
                name="runtotal_user_sums",
            )
        ]

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
    """A daily budget in tokens, in money or both: one user's own, or shared by the
    members of one group; for every model, or for one (`model`, as agents name it).

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
        null=True,
        blank=True,
        help_text="Tokens (prompt + completion) per day; a group's members share "
        "them. Empty: no token limit.",
    )
    daily_cost = models.DecimalField(
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        help_text="Money per day, in the billing currency, at the models' prices. "
        "Empty: no money limit.",
    )
    model = models.CharField(
        max_length=260,
        blank=True,
        default="",
        help_text="Only runs on this model count (as agents name it); blank: all.",
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
            models.CheckConstraint(
                condition=models.Q(daily_tokens__isnull=False)
                | models.Q(daily_cost__isnull=False),
                name="budget_has_a_limit",
            ),
            models.UniqueConstraint(
                fields=["user", "model"],
                condition=models.Q(user__isnull=False),
                name="budget_unique_user_model",
            ),
            models.UniqueConstraint(
                fields=["group", "model"],
                condition=models.Q(group__isnull=False),
                name="budget_unique_group_model",
            ),
        ]

    def __str__(self) -> str:
        owner = f"user {self.user}" if self.user_id else f"group {self.group}"
        return f"{owner}: {self.daily_tokens} tokens, {self.daily_cost} a day"
