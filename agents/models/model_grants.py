"""Model grants: who may use which model, and the one version row every process
reads to know its cached grants are stale (agents.model_grants).

A grant allows or denies one model (`openai/gpt-4o-mini`, `lab/llama3`: as agents
name it) or every model of one connection or provider (`lab/*`) to one user or one
group, until an optional expiry. The rules are tool grants' (docs/permissions.md):
any live deny wins, else any live allow, else the default (docs/models.md).
"""

import uuid

from django.conf import settings
from django.db import models


class ModelGrant(models.Model):
    """Allow or deny a model (or a connection's every model) to a user or a group."""

    class Effect(models.TextChoices):
        ALLOW = "allow", "Allow"
        DENY = "deny", "Deny"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="model_grants",
    )
    group = models.ForeignKey(
        "auth.Group",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="model_grants",
    )
    model = models.CharField(
        max_length=260,
        help_text="As agents name it (openai/gpt-4o-mini, lab/llama3), or "
        "<connection>/* for every model of a connection or provider.",
    )
    effect = models.CharField(max_length=8, choices=Effect)
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="Ignored from then on; empty: never."
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

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(user__isnull=False, group__isnull=True)
                | models.Q(user__isnull=True, group__isnull=False),
                name="model_grant_user_xor_group",
            ),
            models.UniqueConstraint(
                fields=["user", "model"],
                condition=models.Q(user__isnull=False),
                name="model_grant_unique_user_model",
            ),
            models.UniqueConstraint(
                fields=["group", "model"],
                condition=models.Q(group__isnull=False),
                name="model_grant_unique_group_model",
            ),
        ]

    def __str__(self) -> str:
        return f"model grant #{self.pk}: {self.effect} {self.model}"


class ModelGrantsVersion(models.Model):
    """One row (pk 1): a new stamp with every change to model grants or group
    membership, in its transaction, so each process's kept grants are read again."""

    stamp = models.UUIDField(default=uuid.uuid4)

    def __str__(self) -> str:
        return f"model grants version {self.stamp}"
