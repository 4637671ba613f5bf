"""Eval sets and their cases.

A set has an owner and may be shared to groups; its criteria are ADK's
`test_config.json` "criteria" (`tool_trajectory_avg_score`, `response_match_score`,
...). A case keeps ADK's shape: the conversation as ADK `Invocation`s (user
content, the expected tool uses with their recorded results, the final response)
and the session's state at the start, so a set exports to `.evalset.json` as is.
"""

from django.conf import settings
from django.db import models


def default_criteria():
    return {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}


class EvalSet(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="eval_sets"
    )
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    groups = models.ManyToManyField(
        "auth.Group",
        blank=True,
        related_name="eval_sets",
        help_text="Groups whose members may read and run the set.",
    )
    criteria = models.JSONField(
        default=default_criteria,
        help_text="ADK test_config.json criteria: metric name to threshold (or "
        "an object with a threshold and options).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "name"], name="evals_set_name_per_owner"
            )
        ]

    def __str__(self):
        return self.name


class EvalCase(models.Model):
    eval_set = models.ForeignKey(
        EvalSet, on_delete=models.CASCADE, related_name="cases"
    )
    eval_id = models.CharField(max_length=200, help_text="ADK's eval_id.")
    position = models.PositiveIntegerField(default=0)
    conversation = models.JSONField(
        default=list,
        help_text="ADK Invocations: user_content, intermediate_data (tool uses "
        "with their recorded results), final_response.",
    )
    session_input = models.JSONField(
        default=dict, help_text="ADK SessionInput: app_name, user_id, state."
    )
    expectations = models.JSONField(
        default=list,
        help_text="Governance outcomes the case asserts (a call denied, held for "
        "approval, refused by a condition; a budget stopping the run).",
    )
    source_session = models.ForeignKey(
        "agents.Session",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["eval_set", "eval_id"], name="evals_case_id_per_set"
            )
        ]

    def __str__(self):
        return self.eval_id
