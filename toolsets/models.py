"""The tool catalog and its governance: toolsets, tools, grants and the audit of calls."""

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q


class Toolset(models.Model):
    """A named group of tools: a code toolset of settings, a BaseToolset, or an agent's
    plain function tools."""

    class Source(models.TextChoices):
        BUILTIN = "builtin", "Built in"
        LOCAL = "local", "Local code"
        MCP = "mcp", "MCP server"
        OPENAPI = "openapi", "OpenAPI"

    class Policy(models.TextChoices):
        OPEN = "open", "Open: everyone unless denied"
        GRANTED_ONLY = "granted_only", "Granted only"

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    source = models.CharField(max_length=16, choices=Source, default=Source.LOCAL)
    origin = models.CharField(
        max_length=255,
        blank=True,
        help_text="Where the code lives (dotted path, agent).",
    )
    default_policy = models.CharField(
        max_length=16, choices=Policy, default=Policy.OPEN
    )
    enabled = models.BooleanField(
        default=True, help_text="Kill switch: off disables every tool for everyone."
    )
    missing = models.BooleanField(
        default=False, help_text="No longer found in code; kept for grants and audit."
    )
    # Activation (toolsets.activation) only narrows access: an inactive toolset's
    # tools are not offered in a session until the model or the user activates it.
    active_by_default = models.BooleanField(
        default=True,
        help_text="Active in a new session; each session may switch it on or off.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Tool(models.Model):
    """One tool as the model sees it, named `<toolset>.<tool>`."""

    class Risk(models.TextChoices):
        READ = "read", "Reads"
        WRITE = "write", "Writes"
        DANGEROUS = "dangerous", "Dangerous"

    toolset = models.ForeignKey(Toolset, on_delete=models.CASCADE, related_name="tools")
    name = models.CharField(max_length=200, help_text="The name the model calls.")
    full_name = models.CharField(max_length=301, unique=True)
    description = models.TextField(blank=True)
    parameters = models.JSONField(
        default=dict, blank=True, help_text="JSON schema of the arguments."
    )
    risk = models.CharField(max_length=16, choices=Risk, default=Risk.WRITE)
    enabled = models.BooleanField(default=True, help_text="Kill switch for this tool.")
    missing = models.BooleanField(
        default=False, help_text="No longer found in code; kept for grants and audit."
    )
    policy = models.JSONField(
        default=dict,
        blank=True,
        help_text="Admin override of the execution policy (toolsets.policies), "
        'e.g. {"timeout": 5, "retries": 2}; keys left out keep the default.',
    )
    # Human approval set in the catalog (toolsets.governance.checks asks, agents.requests
    # keeps the request), for a tool whose code asks for none.
    requires_approval = models.BooleanField(
        default=False, help_text="Every call waits for a person's approval."
    )
    approver_group = models.ForeignKey(
        Group,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who approves (never the requester); blank: the session owner.",
    )
    approval_timeout = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Seconds before an undecided approval is rejected; blank: never.",
    )
    approvals_required = models.PositiveSmallIntegerField(
        default=1,
        help_text="How many people of the approver group must approve each call "
        "(2: the two-person rule); never the requester, each once.",
    )
    requester_may_approve = models.BooleanField(
        default=False,
        help_text="The requester may decide her own calls (even with an approver "
        'group), and "always allow" the tool for the rest of her session.',
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["full_name"]
        constraints = [
            models.UniqueConstraint(
                fields=["toolset", "name"], name="tool_unique_name_in_toolset"
            )
        ]

    def __str__(self) -> str:
        return self.full_name


class Grant(models.Model):
    """Allow or deny a toolset or one tool to a user or a group, maybe until a time."""

    class Effect(models.TextChoices):
        ALLOW = "allow", "Allow"
        DENY = "deny", "Deny"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="tool_grants",
    )
    group = models.ForeignKey(
        Group,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="tool_grants",
    )
    toolset = models.ForeignKey(
        Toolset, null=True, blank=True, on_delete=models.CASCADE, related_name="grants"
    )
    tool = models.ForeignKey(
        Tool, null=True, blank=True, on_delete=models.CASCADE, related_name="grants"
    )

    class Otherwise(models.TextChoices):
        DENY = "deny", "Deny"
        APPROVAL = "approval", "Ask for approval"

    effect = models.CharField(max_length=8, choices=Effect)
    expires_at = models.DateTimeField(null=True, blank=True)
    # An allow on one tool may hold only for calls whose arguments fit a condition
    # (toolsets.grant_conditions); `otherwise` is what a call outside it gets.
    condition = models.JSONField(
        null=True,
        blank=True,
        help_text="Per argument: enum, pattern, prefix, minimum, maximum, e.g. "
        '{"path": {"prefix": "reports/"}}; blank: every call.',
    )
    otherwise = models.CharField(
        max_length=8,
        choices=Otherwise,
        default=Otherwise.DENY,
        help_text="What a call outside the condition gets: denied, or held for "
        "approval.",
    )
    approvals_required = models.PositiveSmallIntegerField(
        default=1,
        help_text="A call held for approval outside the condition: how many "
        "different people must approve it (at least the tool's own number).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(user__isnull=False, group__isnull=True)
                | Q(user__isnull=True, group__isnull=False),
                name="grant_user_xor_group",
            ),
            models.CheckConstraint(
                condition=Q(toolset__isnull=False, tool__isnull=True)
                | Q(toolset__isnull=True, tool__isnull=False),
                name="grant_toolset_xor_tool",
            ),
            models.CheckConstraint(
                condition=Q(effect__in=["allow", "deny"]), name="grant_effect_valid"
            ),
            models.CheckConstraint(
                condition=Q(condition__isnull=True)
                | Q(effect="allow", tool__isnull=False),
                name="grant_condition_on_tool_allow",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.effect} {self.subject_label} on {self.target_label}"

    @property
    def subject_label(self) -> str:
        if self.user_id:
            return f"user {self.user.get_username()}"
        return f"group {self.group.name}"

    @property
    def target_label(self) -> str:
        if self.tool_id:
            return f"tool {self.tool.full_name}"
        return f"toolset {self.toolset.name}"


class ToolCall(models.Model):
    """The audit record of one tool call: who, where, what, how it ended, which
    access rule let it through, and for a call held for approval, who decided.

    A held call's row is its pause: `awaiting_approval` while a person decides,
    then the decision (`approved`, `rejected`, `expired`) with `decided_by` and
    `decided_at` (toolsets.governance.decisions). An approved call that ADK runs
    again gets a row of its own, with how that run ended.
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
        max_length=100, blank=True, db_index=True, help_text="The agent (app) name."
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
    number, 0 for a call of nobody's, and -1 (call_totals.EVERYONE) for a day's row
    of every user's calls (`hour`: the day's start, UTC), which staff's Overview by
    day reads.
    """

    hour = models.DateTimeField(help_text="The hour's start, UTC.")
    user_id = models.IntegerField(
        help_text="The caller, 0 if none (kept after deletion); -1: a day of everyone."
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
            # Staff's denials by user: the denied rows alone.
            models.Index(fields=["status", "hour"], name="toolcalltotal_status"),
        ]

    def __str__(self) -> str:
        return f"{self.hour} {self.tool} {self.status}: {self.calls}"


class ToolImport(models.Model):
    """An MCP server or OpenAPI spec an administrator registered at run time.

    `registration` holds the fields of toolsets.imports' McpServer / OpenApiSpec,
    sealed (stored.stored_registration: they may hold secrets), with its origin and
    public fields in clear for display. Its toolset
    (same name, source mcp / openapi) is governed like any code toolset and stays
    when the import is deleted, marked missing, for its grants and audit.
    """

    class Kind(models.TextChoices):
        MCP = "mcp", "MCP server"
        OPENAPI = "openapi", "OpenAPI spec"

    name = models.CharField(max_length=63, unique=True)
    kind = models.CharField(max_length=16, choices=Kind)
    registration = models.JSONField(
        help_text="The registration's fields; may hold secrets (env, headers)."
    )
    document = models.JSONField(
        default=dict,
        blank=True,
        help_text="An OpenAPI import's spec as last read; agents are built from it.",
    )
    enabled = models.BooleanField(
        default=True, help_text="Off: never connected nor offered; tools kept."
    )
    toolset = models.OneToOneField(
        Toolset,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="stored_import",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_refreshed_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(
        blank=True, help_text="Why the last connection or refresh failed; blank: ok."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class SessionToolset(models.Model):
    """A session's own choice to have one of its agent's toolsets active or not.

    No row: the toolset's `active_by_default` applies (toolsets.activation).
    """

    session = models.ForeignKey(
        "agents.Session", on_delete=models.CASCADE, related_name="toolset_choices"
    )
    toolset = models.ForeignKey(
        Toolset, on_delete=models.CASCADE, related_name="session_choices"
    )
    active = models.BooleanField()
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Blank: the model switched it.",
    )
    changed_at = models.DateTimeField()

    class Meta:
        ordering = ["session", "toolset"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "toolset"], name="session_toolset_unique"
            )
        ]

    def __str__(self) -> str:
        state = "active" if self.active else "inactive"
        return f"{self.toolset} {state} in {self.session_id}"


class ProviderIdentity(models.Model):
    """A user's account at the OpenID Connect provider (toolsets.sso): who signs in as whom.

    The provider's issuer and subject (`sub`) are the link, never a name or an email:
    a provider account renamed keeps its Toolcrib user, and another one taking or
    claiming a name gets no access to the user of that name.
    """

    class LinkedBy(models.TextChoices):
        CREATED = "created", "her first sign-in created the user"
        USER = "user", "she linked it herself, signed in"
        STAFF = "staff", "staff linked it"
        # Before links were made by subject only: a provider account claiming an
        # existing user's name was linked to her. Review these.
        NAME = "name", "linked by name, before links by subject only: review"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="provider_identities",
    )
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    linked_by = models.CharField(
        max_length=8, choices=LinkedBy.choices, default=LinkedBy.CREATED
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_sign_in_at = models.DateTimeField(null=True, blank=True)
    # What the provider answered at her sign-in or last re-check
    # (toolsets.sso.recheck), sealed (project.sealing): the refresh token asks it
    # about her again; the access token, while valid, when it issued no refresh token.
    refresh_token = models.TextField(blank=True, default="")
    access_token = models.TextField(blank=True, default="")
    access_token_expires_at = models.DateTimeField(null=True, blank=True)
    # When the provider last vouched for her (a sign-in or a re-check).
    checked_at = models.DateTimeField(null=True, blank=True)
    # When a re-check found the provider no longer lets her in and switched her
    # off: her next provider sign-in switches her on again.
    offboarded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["issuer", "subject"]
        constraints = [
            models.UniqueConstraint(
                fields=["issuer", "subject"], name="provider_identity_unique"
            ),
            models.UniqueConstraint(
                fields=["issuer", "user"], name="provider_identity_one_per_user"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"


class GatewayToken(models.Model):
    """A personal access token to the MCP gateway (toolsets.gateway), limited to
    chosen toolsets: its tools are its user's, within those toolsets.

    Only the token's digest is kept (knox's hash, as for API tokens), with its first
    characters to recognise it in a list; revoking a token deletes its row.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="gateway_tokens",
    )
    name = models.CharField(max_length=100, help_text="What the token is for.")
    digest = models.CharField(max_length=128, unique=True)
    prefix = models.CharField(max_length=16, help_text="The token's first characters.")
    toolsets = models.ManyToManyField(Toolset, related_name="gateway_tokens")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class AccessVersion(models.Model):
    """How many times the catalog and the grants changed: what every process's
    access decisions are cached under (toolsets.access).

    One row. A change bumps it as it commits, so a process that reads it learns of
    every committed change, whether or not Redis was there to ring the doorbell.
    """

    catalog = models.BigIntegerField(default=1)
    grants = models.BigIntegerField(default=1)

    def __str__(self) -> str:
        return f"catalog {self.catalog}, grants {self.grants}"
