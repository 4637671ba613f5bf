"""Credentials: a user's link to her sign-on provider, her personal tokens to the gateway."""

from django.conf import settings
from django.db import models

from toolsets.models.catalog import Toolset


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
