"""A user's credentials for the tools of an app, sealed (agents.adk.credentials)."""

from django.conf import settings
from django.db import models


class Credential(models.Model):
    """One user's credential for one credential key of one app, encrypted.

    Keyed as ADK's credential services key it: (app, user, credential key), so a
    credential given to one agent is never handed to another. `sealed` is a Fernet
    token of the AuthCredential's JSON (agents.adk.credentials); nothing else here
    is secret, and nothing outside agents.adk.credentials reads `sealed`.
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="tool_credentials",
    )
    app_name = models.CharField(
        max_length=100, help_text="The app (agent) the credential was given to."
    )
    key = models.CharField(max_length=255, help_text="The AuthConfig's credential_key.")
    auth_type = models.CharField(max_length=32, help_text="apiKey, http, oauth2, ...")
    scheme = models.CharField(max_length=32, blank=True)
    agent = models.CharField(max_length=128, blank=True)
    tool_name = models.CharField(max_length=255, blank=True)
    sealed = models.TextField(editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "app_name", "key"],
                name="credential_unique_key_per_owner_app",
            )
        ]

    def __str__(self) -> str:
        return f"{self.key} of user {self.owner_id} in {self.app_name}"
