"""Share, ShareView, ShareSettings: a session shared read-only by a link (agents.shares).

A Share is a link to one session as it stood when it was shared: the events up to
`upto_seq`. Its token is shown once, at creation; the database keeps only its
SHA-256 digest, so a copy of the database opens no shared session.
"""

from django.conf import settings
from django.db import models

from agents.models.sessions import Session


class Share(models.Model):
    """A read-only link to a session, as of when it was made; revocable, may expire."""

    session = models.ForeignKey(
        Session, on_delete=models.CASCADE, related_name="shares"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    digest = models.CharField(
        max_length=64, unique=True, help_text="SHA-256 of the link's token (hex)."
    )
    upto_seq = models.PositiveBigIntegerField(
        help_text="The session's last seq when it was shared: the link shows no later "
        "event."
    )
    anyone = models.BooleanField(
        default=False,
        help_text="Anyone with the link, signed in or not, while staff allow it "
        "(ShareSettings); else signed-in people only.",
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"share {self.pk} of {self.session_id}"


class ShareView(models.Model):
    """One opening of a shared link (or a session continued from it): who, when, where."""

    VIEW = "view"
    FORK = "fork"

    share = models.ForeignKey(Share, on_delete=models.CASCADE, related_name="views")
    viewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Null: someone not signed in.",
    )
    viewer_name = models.CharField(max_length=150, blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    kind = models.CharField(
        max_length=8,
        default=VIEW,
        help_text='"view", or "fork": continued in a new session.',
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["share", "-at"], name="share_view_recent")]

    def __str__(self) -> str:
        return f"{self.kind} of share {self.share_id} by {self.viewer_name or 'anyone'}"


class ShareSettings(models.Model):
    """The team's one row of sharing settings, changed by staff (the change audit)."""

    anyone_with_link = models.BooleanField(
        default=False,
        help_text="Whether a shared link may be opened by anyone with it, not signed "
        "in.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "share settings"

    def __str__(self) -> str:
        return "share settings"
