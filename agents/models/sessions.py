"""Sessions, their events and their state by scope, as ADK's session service keeps
them (agents.adk.sessions)."""

import uuid

from django.conf import settings
from django.db import models

from agents.models.agent_specs import AgentSpec


def new_session_id() -> str:
    return str(uuid.uuid4())


class Session(models.Model):
    """An ADK session: one conversation of one user with one agent (its app).

    `id` is Toolcrib's own, unique across apps and users: the API, URLs, sockets
    and foreign keys use it. `adk_id` is the id ADK knows the session by, unique
    per (app_name, user_id) only, as in ADK's session services; the two are equal
    unless ADK created the session with an id another session already had.
    """

    id = models.CharField(primary_key=True, max_length=128, default=new_session_id)
    adk_id = models.CharField(max_length=128, help_text="The session's id in ADK.")
    app_name = models.CharField(max_length=100, db_index=True)
    user_id = models.CharField(max_length=128, db_index=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="agent_sessions",
    )
    agent = models.ForeignKey(
        AgentSpec,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="sessions",
    )
    state = models.JSONField(default=dict, blank=True)
    last_seq = models.PositiveBigIntegerField(default=0)
    revision = models.PositiveBigIntegerField(default=0)
    last_update_time = models.FloatField(default=0.0)
    closed_at = models.DateTimeField(
        null=True, blank=True, help_text="Closed: added to memory, no new turns."
    )
    title = models.CharField(
        max_length=200,
        blank=True,
        help_text="What the session is about: its first message's start until "
        "renamed (agents.titles).",
    )
    archived_at = models.DateTimeField(
        null=True, blank=True, help_text="Archived: left out of the sessions list."
    )
    # Null, not blank: SQLite adds a nullable column in place, where a column
    # with a default would remake agents_session and drop its search triggers.
    model = models.CharField(  # noqa: DJ001
        max_length=260,
        null=True,
        blank=True,
        help_text="The model its owner picked among the agent's (agents.model_picks); "
        "null: the agent's own.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        indexes = [
            models.Index(fields=["app_name", "user_id"]),
            # A user's list and archive by last activity, a page a range of one
            # (agents.session_list, by key: `cursor`).
            models.Index(
                fields=["owner", "updated_at", "id"],
                condition=models.Q(archived_at__isnull=True),
                name="session_list",
            ),
            models.Index(
                fields=["owner", "updated_at", "id"],
                condition=models.Q(archived_at__isnull=False),
                name="session_archive",
            ),
            # Staff's list in the admin, newest first (project.admin_lists): kept
            # only as a session starts, where one by last activity would change
            # with every stored event.
            models.Index(fields=["-created_at"], name="session_newest"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "user_id", "adk_id"], name="session_unique_adk_id"
            )
        ]

    def __str__(self) -> str:
        return self.id


class Event(models.Model):
    """One stored event of a session, numbered by `seq` within the session.

    ADK events (is_adk) are what the session service returns to ADK; run lifecycle
    events (run_started, run_finished, error) are Toolcrib's own and only go to clients.
    """

    # No index of its own: both unique constraints below start with it, and serve
    # every read by session (and its cascade) while each insert updates one fewer.
    session = models.ForeignKey(
        Session, on_delete=models.CASCADE, related_name="events", db_index=False
    )
    seq = models.PositiveBigIntegerField()
    event_id = models.CharField(max_length=64)
    invocation_id = models.CharField(max_length=128, blank=True, db_index=True)
    author = models.CharField(max_length=128)
    kind = models.CharField(max_length=32)
    is_adk = models.BooleanField(default=True)
    timestamp = models.FloatField()
    data = models.JSONField()
    sender = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who sent a user message: the signed-in user it came from (never "
        "the client's word); null for events not from a person.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="event_unique_seq"),
            models.UniqueConstraint(
                fields=["session", "event_id"], name="event_unique_event_id"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq} {self.kind}"


class AppState(models.Model):
    """One `app:` state key, shared by every user of the app. Stored without prefix."""

    app_name = models.CharField(max_length=100)
    key = models.CharField(max_length=255)
    value = models.JSONField(null=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "key"], name="app_state_unique_key"
            )
        ]

    def __str__(self) -> str:
        return f"app:{self.key} ({self.app_name})"


class UserState(models.Model):
    """One `user:` state key, shared by one user's sessions of one app. Stored without prefix."""

    app_name = models.CharField(max_length=100)
    user_id = models.CharField(max_length=128)
    key = models.CharField(max_length=255)
    value = models.JSONField(null=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "user_id", "key"], name="user_state_unique_key"
            )
        ]

    def __str__(self) -> str:
        return f"user:{self.key} ({self.app_name}, {self.user_id})"
