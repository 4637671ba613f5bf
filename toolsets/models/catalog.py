"""The catalog: toolsets, their tools, and the imports an administrator stores."""

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models


class Toolset(models.Model):
    """A named group of tools: a code toolset of settings, a BaseToolset, or an agent's
    plain function tools."""

    class Source(models.TextChoices):
        BUILTIN = "builtin", "Built in"
        LOCAL = "local", "Local code"
        MCP = "mcp", "MCP server"
        OPENAPI = "openapi", "OpenAPI"
        A2A = "a2a", "Remote A2A agent"

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
    # An imported tool (its toolset is a ToolImport's) is offered only while what
    # it declares is what staff approved (toolsets.reviews, governance's Review).
    approved_digest = models.CharField(
        max_length=64,
        blank=True,
        help_text="Digest of the description and argument schema staff approved "
        "(toolsets.declarations); blank: never reviewed.",
    )
    approved_description = models.TextField(blank=True)
    approved_parameters = models.JSONField(default=dict, blank=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    approved_at = models.DateTimeField(null=True, blank=True)
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


class ToolImport(models.Model):
    """An MCP server, OpenAPI spec or remote A2A agent an administrator registered
    at run time.

    `registration` holds the fields of toolsets.imports' McpServer / OpenApiSpec,
    sealed (stored.stored_registration: they may hold secrets), with its origin and
    public fields in clear for display. Its toolset
    (same name, source mcp / openapi) is governed like any code toolset and stays
    when the import is deleted, marked missing, for its grants and audit.
    """

    class Kind(models.TextChoices):
        MCP = "mcp", "MCP server"
        OPENAPI = "openapi", "OpenAPI spec"
        A2A = "a2a", "Remote A2A agent"

    name = models.CharField(max_length=63, unique=True)
    kind = models.CharField(max_length=16, choices=Kind)
    registration = models.JSONField(
        help_text="The registration's fields; may hold secrets (env, headers)."
    )
    document = models.JSONField(
        default=dict,
        blank=True,
        help_text="An OpenAPI import's spec, or an A2A agent's card, as last read; "
        "agents are built from it.",
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
