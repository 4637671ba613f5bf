"""Prompts: a person's reusable texts, shared to groups, inserted from the composer
with `/command` (agents.prompts; docs/prompts.md).

The body may hold variables, `{{name}}`, that the composer asks for before it
inserts the text; anything else between braces is the body's own text.
"""

from django.conf import settings
from django.db import models


class Prompt(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="prompts"
    )
    command = models.CharField(
        max_length=64, help_text="What follows `/` in the composer: a-z, 0-9 and -."
    )
    title = models.CharField(max_length=200)
    description = models.CharField(max_length=500, blank=True)
    body = models.TextField()
    groups = models.ManyToManyField(
        "auth.Group",
        blank=True,
        related_name="prompts",
        help_text="Groups whose members may use the prompt (only its owner and "
        "staff change it).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["command", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "command"], name="agents_prompt_command_per_owner"
            )
        ]

    def __str__(self):
        return f"/{self.command}"
