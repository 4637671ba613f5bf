"""Who may use what: grants, the access version counters, a session's active toolsets."""

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q

from toolsets.models.catalog import Tool, Toolset


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
