"""A person's display preferences (agents.preferences): the page's theme and the
language of the pages, the API's messages and the sockets' error frames."""

from django.conf import settings
from django.db import models

# No language chosen: the browser's (Accept-Language), else settings.LANGUAGE_CODE.
AUTOMATIC = "auto"


class UserPreference(models.Model):
    """One row per user, made at her first choice; without one, the defaults hold."""

    class Theme(models.TextChoices):
        SYSTEM = "system"
        LIGHT = "light"
        DARK = "dark"

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="+",
    )
    theme = models.CharField(max_length=8, choices=Theme, default=Theme.SYSTEM)
    # A code of settings.LANGUAGES, or AUTOMATIC. Not choices: a language added to
    # the settings needs no migration.
    language = models.CharField(
        max_length=16,
        default=AUTOMATIC,
        help_text="A code of settings.LANGUAGES; auto: the browser's.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"preferences of user {self.user_id}"
