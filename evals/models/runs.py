"""A run of an eval set against an agent (a version of it) and a model, as a chosen
user, and its result per case (evals.running scores them)."""

from django.conf import settings
from django.db import models


class EvalRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    eval_set = models.ForeignKey(
        "evals.EvalSet", on_delete=models.CASCADE, related_name="runs"
    )
    agent_name = models.CharField(max_length=200)
    agent_version = models.PositiveIntegerField(
        null=True, blank=True, help_text="An agent builder version; empty: live."
    )
    model = models.CharField(
        max_length=260, blank=True, help_text="Empty: the agent's."
    )
    as_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        related_name="eval_runs",
    )
    live_tools = models.BooleanField(
        default=False,
        help_text="Call read-only tools for real; otherwise every tool answers "
        "from the case's recorded result.",
    )
    status = models.CharField(max_length=12, choices=Status, default=Status.QUEUED)
    criteria = models.JSONField(default=dict, help_text="The set's, as run.")
    threshold = models.FloatField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True)
    passed = models.BooleanField(null=True)
    totals = models.JSONField(
        default=dict, help_text="tokens_in, tokens_out, cost, latency_ms, errors."
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["eval_set", "-id"], name="evals_run_set_newest")
        ]

    def __str__(self):
        return f"run {self.pk} of {self.eval_set_id} ({self.status})"


class EvalCaseResult(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        PASSED = "passed", "Passed"
        FAILED = "failed", "Failed"
        ERROR = "error", "Error"

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="results")
    case = models.ForeignKey(
        "evals.EvalCase",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="results",
    )
    eval_id = models.CharField(max_length=200)
    case_snapshot = models.JSONField(default=dict, help_text="The case as run.")
    status = models.CharField(max_length=8, choices=Status, default=Status.PENDING)
    scores = models.JSONField(
        default=dict, help_text="metric: {score, threshold, passed}."
    )
    actual = models.JSONField(
        default=list, help_text="What the agent did: invocations as ADK's."
    )
    error = models.TextField(blank=True)
    session = models.ForeignKey(
        "agents.Session",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["run", "position", "id"]

    def __str__(self):
        return f"{self.eval_id} in run {self.run_id} ({self.status})"
