"""A2A tasks: what a caller over A2A (agents.a2a) knows as a task, kept as the
Toolcrib session and runs it is."""

import uuid

from django.conf import settings
from django.db import models

from agents.models.runs import Run
from agents.models.sessions import Session


class A2ATask(models.Model):
    """One A2A task: its id is the one the caller reads, its session is the A2A
    `contextId`, and its state is read from its latest run (agents.a2a.tasks).

    A task belongs to the principal whose token started it, and to no one else:
    not even staff reach another principal's task over A2A.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(
        Session, on_delete=models.CASCADE, related_name="a2a_tasks"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="a2a_tasks"
    )
    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="a2a_tasks",
        help_text="The task's turn (the turns answers start resume it: Run.resumes).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"a2a task {self.id}"
