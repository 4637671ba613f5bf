"""The audit of tool calls, and its totals per hour and per day."""

from django.conf import settings
from django.db import models

from toolsets.models.catalog import Tool


class ToolCall(models.Model):
    """The audit record of one tool call: who, where, what, how it ended, which
    access rule let it through, and for a call held for approval, who decided.

    A held call's row is its pause: `awaiting_approval` while a person decides,
    then the decision (`approved`, `rejected`, `expired`) with `decided_by` and
    `decided_at` (toolsets.governance.decisions). An approved call that ADK runs
    again gets a row of its own, with how that run ended, and who approved it and
    when (copied from the held row).
    """

    class Status(models.TextChoices):
        OK = "ok"
        ERROR = "error"
        DENIED = "denied"
        TIMEOUT = "timeout"
        # Refused (or answered) by a check of governance without running
        # (toolsets.governance.checks), each with its own status.
        INVALID_ARGS = "invalid_args"
        RATE_LIMITED = "rate_limited"
        CACHED = "cached"
        GATED = "gated"
        BUSY = "busy"
        INACTIVE = "inactive"
        NOT_OFFERED = "not_offered"
        # An imported tool whose declaration staff have not approved (new, or
        # changed since): toolsets.governance.checks.Review.
        UNREVIEWED = "unreviewed"
        # Held for a person's decision, then that decision.
        AWAITING_APPROVAL = "awaiting_approval"
        APPROVED = "approved"
        REJECTED = "rejected"
        EXPIRED = "expired"
        # Answered by the agent's own before_tool_callback, so it did not run.
        REFUSED = "refused"
        # Cut short: a person stopped its turn while it ran (agents.turns.cancel).
        CANCELLED = "cancelled"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="tool_calls",
    )
    session_id = models.CharField(max_length=128, blank=True, db_index=True)
    run_id = models.UUIDField(null=True, blank=True, db_index=True)
    invocation_id = models.CharField(max_length=128, blank=True)
    agent = models.CharField(
        max_length=100, blank=True, help_text="The agent (app) name."
    )
    adk_agent = models.CharField(
        max_length=128, blank=True, help_text="The ADK agent in the tree that called."
    )
    call_id = models.CharField(max_length=128, blank=True)
    tool_name = models.CharField(max_length=200, help_text="The name the model called.")
    tool_full_name = models.CharField(max_length=301, blank=True, db_index=True)
    tool = models.ForeignKey(
        Tool, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls"
    )
    args = models.JSONField(default=dict, blank=True)
    result_summary = models.TextField(
        blank=True,
        help_text="What the model received as the call's result, after every "
        "after-tool callback (secrets redacted, cut).",
    )
    raw_result_summary = models.TextField(
        blank=True,
        help_text="The tool's own result, when a callback changed what the model "
        "received; blank if nothing did (secrets redacted, cut).",
    )
    status = models.CharField(max_length=32, choices=Status)
    access_rule = models.TextField(
        blank=True, help_text="The access rule that allowed or denied the call."
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="decided_tool_calls",
        help_text="Who approved or rejected a held call; blank if nobody (expired).",
    )
    decided_at = models.DateTimeField(
        null=True, blank=True, help_text="When a held call was decided, or expired."
    )
    asked_args = models.JSONField(
        null=True,
        blank=True,
        help_text="The arguments asked, when an approver changed them before "
        "approving (`args` are then the approved ones); blank: run as asked.",
    )
    approved_args = models.JSONField(
        null=True,
        blank=True,
        help_text="A held call's: the arguments an approver changed it to.",
    )
    args_edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who changed the call's arguments before approving it.",
    )
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(
        default=1, help_text="Times the tool ran: 0 if refused or cached, >1 retried."
    )

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [
            models.Index(fields=["user", "started_at"]),
            # Staff's audit and Overview read everyone's calls by time alone.
            models.Index(fields=["started_at"], name="toolsets_toolcall_started"),
            # The audit filtered by agent, newest first, a page at a time by
            # `before` (toolsets.audit.older_than): a range, never a sort of all
            # of an agent's calls. It also serves what read `agent` alone.
            models.Index(fields=["agent", "started_at"], name="toolcall_agent_started"),
        ]

    def __str__(self) -> str:
        return f"{self.tool_full_name or self.tool_name} {self.status}"


# A call's duration counts in the first bucket whose bound (ms) it does not pass;
# past the last, in `over_60s`. Percentiles read from them are bucket-accurate.
LATENCY_BUCKETS: tuple[tuple[int | None, str], ...] = (
    (10, "le_10ms"),
    (25, "le_25ms"),
    (50, "le_50ms"),
    (100, "le_100ms"),
    (250, "le_250ms"),
    (500, "le_500ms"),
    (1000, "le_1s"),
    (2500, "le_2500ms"),
    (5000, "le_5s"),
    (10000, "le_10s"),
    (30000, "le_30s"),
    (60000, "le_60s"),
    (None, "over_60s"),
)


class ToolCallTotal(models.Model):
    """The tool calls of one hour: per hour (UTC) of their start, user, agent,
    tool and status, how many, their durations in fixed buckets, and the longest.

    Added to as each audit row is written or changes status, in the same
    transaction (toolsets.call_totals), never by reading the calls again: the
    Overview reads these rows, whatever the number of calls. Rows outlive what they
    count (a deleted user, an audit row past retention): `user_id` is a plain
    number, 0 for a call of nobody's; below 0, a row of every user's calls of a
    period (`hour`: its start, UTC): -1 a day, -2 an hour, -3 six hours, -4 a week
    (project.periods.EVERYONE_BY_PERIOD), and by status alone (agent and tool blank)
    -11 a day, -12 an hour, -13 six hours (call_totals.STATUSES_BY_PERIOD), which
    staff's Overview reads.
    """

    hour = models.DateTimeField(help_text="The hour's start, UTC.")
    user_id = models.IntegerField(
        help_text="The caller, 0 if none (kept after deletion); below 0: every user's."
    )
    agent = models.CharField(max_length=100, help_text="The agent (app) or MCP client.")
    tool = models.CharField(
        max_length=301, help_text="toolset.tool, or the name called."
    )
    status = models.CharField(max_length=32, help_text="The audit row's status.")
    calls = models.BigIntegerField(default=0)
    le_10ms = models.BigIntegerField(default=0)
    le_25ms = models.BigIntegerField(default=0)
    le_50ms = models.BigIntegerField(default=0)
    le_100ms = models.BigIntegerField(default=0)
    le_250ms = models.BigIntegerField(default=0)
    le_500ms = models.BigIntegerField(default=0)
    le_1s = models.BigIntegerField(default=0)
    le_2500ms = models.BigIntegerField(default=0)
    le_5s = models.BigIntegerField(default=0)
    le_10s = models.BigIntegerField(default=0)
    le_30s = models.BigIntegerField(default=0)
    le_60s = models.BigIntegerField(default=0)
    over_60s = models.BigIntegerField(default=0)
    max_ms = models.BigIntegerField(default=0, help_text="The longest call's duration.")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hour", "user_id", "agent", "tool", "status"],
                name="toolcalltotal_key",
            )
        ]
        indexes = [
            # A user's own Overview, and staff's days, by time (staff's hours: the
            # key's index).
            models.Index(fields=["user_id", "hour"], name="toolcalltotal_user"),
            # Staff's denials by user: the users' denied rows alone, read from the
            # index only (a window's rows lie all over the table).
            models.Index(
                fields=["status", "hour", "user_id", "tool", "calls"],
                condition=models.Q(user_id__gte=0),
                name="toolcalltotal_denials",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.hour} {self.tool} {self.status}: {self.calls}"
