"""What ADK's artifact and memory services keep: artifact versions and remembered
events of past sessions (agents.adk.artifacts, agents.adk.memory)."""

from django.db import models


class Artifact(models.Model):
    """One version of an ADK artifact; its content lives in the artifacts storage.

    `session_key` is the session id, or "" for a `user:` artifact, which belongs to
    the user across sessions. `part` is the ADK Part without its payload (text or
    inline bytes), which is the file at `storage_path`.
    """

    app_name = models.CharField(max_length=100)
    user_id = models.CharField(max_length=128)
    session_key = models.CharField(max_length=128, blank=True)
    filename = models.CharField(max_length=512)
    version = models.PositiveIntegerField()
    mime_type = models.CharField(max_length=255, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    storage_path = models.CharField(max_length=512, blank=True)
    part = models.JSONField(default=dict)
    custom_metadata = models.JSONField(default=dict, blank=True)
    create_time = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["app_name", "user_id", "session_key", "filename", "version"]
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "user_id", "session_key", "filename", "version"],
                name="artifact_unique_version",
            )
        ]
        indexes = [models.Index(fields=["app_name", "user_id", "session_key"])]

    def __str__(self) -> str:
        return f"{self.filename} v{self.version}"


class MemoryEntry(models.Model):
    """One remembered event of a user's past session, searchable by its text.

    A deleted memory stays as a row with `is_deleted`, so adding its session to
    memory again does not bring it back (as ADK's in-memory service behaves).
    """

    app_name = models.CharField(max_length=100)
    user_id = models.CharField(max_length=128)
    session_key = models.CharField(max_length=128)
    event_id = models.CharField(max_length=64)
    author = models.CharField(max_length=128, blank=True)
    timestamp = models.FloatField()
    content = models.JSONField()
    text = models.TextField()
    custom_metadata = models.JSONField(default=dict, blank=True)
    is_deleted = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "memory entries"
        ordering = ["app_name", "user_id", "timestamp"]
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "user_id", "session_key", "event_id"],
                name="memory_unique_event",
            )
        ]
        indexes = [models.Index(fields=["app_name", "user_id", "is_deleted"])]

    def __str__(self) -> str:
        return f"{self.author}: {self.text[:40]}"
