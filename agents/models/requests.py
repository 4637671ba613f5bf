"""Pauses for a person (agents.requests): a Request, the approvals of one that needs
several, and a requester's standing approvals."""

from django.conf import settings
from django.db import models

from agents.models.runs import Run
from agents.models.sessions import Session


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
    resume_id = models.TextField(
        blank=True,
        help_text="The id ADK reads the answer under, when it is not call_id: a "
        "workflow tool node's approval (`wf_tool_confirmation:<node path>`).",
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
            # The listings of a kind in any status (a team's history of approvals),
            # newest first: read from the newest until the page is full, never the
            # whole kind sorted (165 ms at 20,000 approvals on SQLite).
            models.Index(fields=["kind", "-id"], name="request_kind_newest"),
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
    session is approved at once (agents.answers.standing), where the catalog
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
