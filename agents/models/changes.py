"""Change: who changed which object a team governs, and when (the change audit)."""

from django.conf import settings
from django.db import models

# What a change shows in place of a field's value when the field is a secret: that
# it changed, never what it was or became.
HIDDEN = "[hidden]"


class Change(models.Model):
    """One change a person made to an object staff govern (an agent, a provider,
    a tool's policy, a user): its fields before and after, or what was done.

    Written by agents.changes in the transaction of the change itself. Rows outlive
    their actor and their object: `actor_name` and `object_repr` keep what they were.
    """

    at = models.DateTimeField(auto_now_add=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    actor_name = models.CharField(max_length=150, blank=True)
    kind = models.CharField(
        max_length=100, help_text='The object\'s model, as "app_label.model".'
    )
    object_id = models.CharField(max_length=255)
    object_repr = models.CharField(max_length=200, blank=True)
    action = models.CharField(
        max_length=32,
        help_text='"create", "update", "delete", or what else was done ("test", '
        '"invite", "rollback", ...).',
    )
    changes = models.JSONField(
        default=dict,
        blank=True,
        help_text='Per field, [before, after] ("[hidden]" for a secret); or what '
        "an action that is not a save says about itself.",
    )

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["-at", "-id"], name="change_recent"),
            models.Index(fields=["kind", "object_id", "-at"], name="change_object"),
            models.Index(fields=["actor", "-at"], name="change_actor"),
        ]

    def __str__(self) -> str:
        return (
            f"{self.actor_name or 'system'} {self.action} {self.kind} {self.object_id}"
        )
