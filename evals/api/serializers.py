"""How eval sets and their cases read over the API."""

from rest_framework import serializers

from evals import sets
from evals.models import EvalCase, EvalSet


class OwnerSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class GroupRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class EvalSetSerializer(serializers.ModelSerializer):
    owner = OwnerSerializer(read_only=True)
    groups = GroupRefSerializer(many=True, read_only=True)
    case_count = serializers.IntegerField(read_only=True)
    may_edit = serializers.SerializerMethodField(
        help_text="Whether you may change the set and its cases (its owner, staff)."
    )
    criteria = serializers.JSONField(
        help_text="ADK test_config.json criteria: metric name to a threshold (0..1) "
        "or an object with a threshold and options (match_type EXACT, IN_ORDER, "
        "ANY_ORDER for tool_trajectory_avg_score)."
    )

    class Meta:
        model = EvalSet
        fields = [
            "id",
            "name",
            "description",
            "owner",
            "groups",
            "criteria",
            "case_count",
            "may_edit",
            "created_at",
            "updated_at",
        ]

    def get_may_edit(self, eval_set: EvalSet) -> bool:
        return sets.may_edit(user=self.context["request"].user, eval_set=eval_set)


class EvalCaseSerializer(serializers.ModelSerializer):
    conversation = serializers.JSONField(
        help_text="ADK Invocations (snake_case): user_content, intermediate_data "
        "(tool_uses with args, tool_responses: the recorded results), final_response."
    )
    session_input = serializers.JSONField(
        help_text="ADK SessionInput: app_name, user_id, state (at the start)."
    )
    expectations = serializers.JSONField(
        help_text="Governance outcomes asserted: [{kind, tool, invocation?}], kind "
        "denied, held_for_approval, refused_by_condition or budget_stops."
    )
    source_session = serializers.CharField(
        source="source_session_id", allow_null=True, read_only=True
    )

    class Meta:
        model = EvalCase
        fields = [
            "id",
            "eval_id",
            "position",
            "conversation",
            "session_input",
            "expectations",
            "source_session",
            "created_at",
            "updated_at",
        ]
