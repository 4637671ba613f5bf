"""What a client sends to start an eval run, and how runs and their results read."""

from typing import Annotated

from pydantic import Field
from rest_framework import serializers

from agents.client_input import ClientInput, StoredText
from evals.models import EvalCaseResult, EvalRun
from evals.running.runs import case_errors


class RunInput(ClientInput):
    """A run of a set: an agent (a version of it), a model, as whom, how."""

    agent: Annotated[StoredText, Field(min_length=1, max_length=200)]
    agent_version: Annotated[int, Field(ge=1, le=2_147_483_647)] | None = None
    model: Annotated[StoredText, Field(max_length=260)] = ""
    as_user: Annotated[StoredText, Field(min_length=1, max_length=150)] | None = None
    live_tools: bool = False
    threshold: Annotated[float, Field(ge=0.0, le=1.0)] | None = None


class EvalRunSerializer(serializers.ModelSerializer):
    eval_set = serializers.IntegerField(source="eval_set_id")
    as_user = serializers.CharField(source="as_user.get_username")
    started_by = serializers.SerializerMethodField()

    class Meta:
        model = EvalRun
        fields = [
            "id",
            "eval_set",
            "agent_name",
            "agent_version",
            "model",
            "as_user",
            "started_by",
            "live_tools",
            "status",
            "criteria",
            "threshold",
            "score",
            "passed",
            "totals",
            "error",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_started_by(self, run: EvalRun) -> str | None:
        return run.started_by.get_username() if run.started_by else None


class CaseResultSerializer(serializers.ModelSerializer):
    case = serializers.IntegerField(source="case_id", allow_null=True)
    expected = serializers.SerializerMethodField(
        help_text="The case as run: its conversation (ADK Invocations) and "
        "expectations."
    )
    errors = serializers.SerializerMethodField(
        help_text="Tool calls that answered an error, turns that failed."
    )
    cost = serializers.FloatField()

    class Meta:
        model = EvalCaseResult
        fields = [
            "id",
            "case",
            "eval_id",
            "position",
            "status",
            "scores",
            "expected",
            "actual",
            "error",
            "errors",
            "tokens_in",
            "tokens_out",
            "cost",
            "latency_ms",
        ]

    def get_expected(self, result: EvalCaseResult) -> dict:
        snapshot = result.case_snapshot or {}
        return {
            "conversation": snapshot.get("conversation") or [],
            "expectations": snapshot.get("expectations") or [],
        }

    def get_errors(self, result: EvalCaseResult) -> int:
        return case_errors(result)


class EvalRunDetailSerializer(EvalRunSerializer):
    eval_set_name = serializers.CharField(source="eval_set.name")
    results = CaseResultSerializer(many=True)

    class Meta(EvalRunSerializer.Meta):
        fields = [*EvalRunSerializer.Meta.fields, "eval_set_name", "results"]
