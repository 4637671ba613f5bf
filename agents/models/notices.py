"""Notices of new requests (agents.notices): who hears of them and how, where
webhooks go, each delivery, and the one-time links in them."""

from django.conf import settings
from django.db import models

from agents.models.requests import Request


class NoticePreference(models.Model):
    """Which channels tell one user of a new request of one kind (agents.notices).

    No row for a kind: the defaults (agents.notices.preferences.DEFAULTS)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    kind = models.CharField(max_length=16, choices=Request.Kind)
    mail = models.BooleanField(help_text="A mail to the user's address.")
    webhook = models.BooleanField(
        help_text="A message to the webhook destinations staff set up for the user."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "kind"], name="notice_preference_unique_kind"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} notices of user {self.user_id}"


class WebhookDestination(models.Model):
    """Where a webhook notice goes, set up by staff (agents.notices).

    A destination of a user (`user`) is hers: it follows her preferences and its
    messages carry her approve / reject links. Else it is a team's: every request
    of its `kinds` (answered by `group`, if set), with a link to the inbox only.
    """

    class Format(models.TextChoices):
        GENERIC = "generic"
        SLACK = "slack"
        TEAMS = "teams"

    name = models.CharField(max_length=100, unique=True)
    # A Slack or Teams webhook's URL is a credential: kept encrypted, its host shown.
    sealed_url = models.TextField(editable=False, help_text="The URL, encrypted.")
    host = models.CharField(max_length=255, help_text="The URL's host, to show.")
    format = models.CharField(max_length=16, choices=Format, default=Format.GENERIC)
    sealed_secret = models.TextField(
        blank=True,
        editable=False,
        help_text="The generic format's signing secret, encrypted; blank: unsigned.",
    )
    kinds = models.JSONField(
        default=list, blank=True, help_text="The request kinds it hears of."
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Whose destination it is; blank: a team's.",
    )
    group = models.CharField(
        max_length=150,
        blank=True,
        help_text="A team's: only requests this group answers; blank: every one.",
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Delivery(models.Model):
    """One notice of a request to one person or destination, and its attempts: the
    delivery log (agents.notices.sending)."""

    class Channel(models.TextChoices):
        MAIL = "mail"
        WEBHOOK = "webhook"

    class Status(models.TextChoices):
        QUEUED = "queued"  # waits for its next attempt, at next_attempt_at
        SENDING = "sending"  # an attempt is under way until next_attempt_at
        SENT = "sent"
        FAILED = "failed"  # every attempt failed
        SKIPPED = "skipped"  # the request ended before the notice went

    request = models.ForeignKey(
        Request, on_delete=models.CASCADE, related_name="deliveries"
    )
    channel = models.CharField(max_length=16, choices=Channel)
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Whom it tells (her links in it); blank: a team's destination.",
    )
    destination = models.ForeignKey(
        WebhookDestination,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="deliveries",
    )
    address = models.CharField(
        max_length=254, help_text="The mail address, or the destination's name."
    )
    status = models.CharField(max_length=16, choices=Status, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            # The sender: deliveries due for an attempt.
            models.Index(fields=["status", "next_attempt_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.channel} of request {self.request_id} to {self.address}"


class NoticeLink(models.Model):
    """An approve or reject link in a notice: one-time, bound to one request and
    one approver, expiring with the request (agents.notices.links). Only the
    token's digest is kept."""

    digest = models.CharField(max_length=64, unique=True)
    request = models.ForeignKey(Request, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    approved = models.BooleanField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        verb = "approve" if self.approved else "reject"
        return f"{verb} link of request {self.request_id} for user {self.user_id}"
