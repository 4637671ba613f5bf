"""Toolsets API shapes. Inputs are validated here, before any service runs."""

from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from agents.client_input import validated
from agents.runtime import redact_secrets
from toolsets import policies
from toolsets.bindings import broken_toolsets
from toolsets.grant_conditions import (
    Condition,
    ConditionError,
    check_condition,
    parse_condition,
)
from toolsets.models import Grant, Tool, ToolCall, Toolset


class ToolsetSerializer(serializers.ModelSerializer):
    """A toolset; staff change its description, default policy, kill switch and
    whether it is active in a new session (toolsets.activation)."""

    tools = serializers.SlugRelatedField(
        slug_field="full_name", many=True, read_only=True
    )
    broken = serializers.SerializerMethodField(
        help_text="Why the toolset's code fails to load (TOOLCRIB_EXTRA_TOOLSETS); "
        "null when it loads."
    )

    class Meta:
        model = Toolset
        fields = [
            "name",
            "description",
            "source",
            "origin",
            "default_policy",
            "enabled",
            "active_by_default",
            "missing",
            "broken",
            "tools",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["name", "source", "origin", "missing", "tools"]

    def get_broken(self, toolset: Toolset) -> str | None:
        return broken_toolsets().get(toolset.name)


@extend_schema_field(policies.OVERRIDE_SCHEMA)
class PolicyField(serializers.JSONField):
    """An admin's policy override, checked field by field (toolsets.policies)."""

    def to_internal_value(self, data):
        try:
            return policies.check_override(super().to_internal_value(data))
        except policies.PolicyError as error:
            raise serializers.ValidationError(error.errors) from error


# The most people a tool's calls may need approvals from (the two-person rule).
MAX_APPROVALS = 10


class ToolSerializer(serializers.ModelSerializer):
    """A tool; staff change its description, risk, kill switch and approval."""

    toolset = serializers.SlugRelatedField(slug_field="name", read_only=True)
    policy = PolicyField(
        required=False,
        help_text="Override of the tool's execution policy; keys left out keep the "
        "default, null switches a limit off.",
    )
    approver_group = serializers.SlugRelatedField(
        slug_field="name",
        queryset=Group.objects.all(),
        allow_null=True,
        required=False,
    )

    class Meta:
        model = Tool
        fields = [
            "full_name",
            "name",
            "toolset",
            "description",
            "parameters",
            "risk",
            "enabled",
            "policy",
            "requires_approval",
            "approver_group",
            "approval_timeout",
            "approvals_required",
            "requester_may_approve",
            "missing",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["full_name", "name", "toolset", "parameters", "missing"]
        extra_kwargs = {
            "approval_timeout": {"min_value": 1},
            "approvals_required": {"min_value": 1, "max_value": MAX_APPROVALS},
        }


@extend_schema_field(policies.EFFECTIVE_SCHEMA)
class EffectivePolicyField(serializers.ReadOnlyField):
    """The policy a call of the tool gets now (toolsets.policies.effective_policy)."""

    def to_representation(self, value: Tool) -> dict:
        return async_to_sync(policies.aeffective_policy)(value).as_json()


class ToolDetailSerializer(ToolSerializer):
    """One tool, with its effective policy: the code's defaults, then settings,
    then the override (`policy`)."""

    effective_policy = EffectivePolicyField(source="*")

    class Meta(ToolSerializer.Meta):
        fields = [*ToolSerializer.Meta.fields, "effective_policy"]


class InvocationSerializer(serializers.Serializer):
    """How a direct call ended (toolsets.governance.direct): the GoAgent ToolOutput
    (`success`, `result`, `error`) with its ToolCall's timings."""

    tool = serializers.CharField(source="call.tool_full_name")
    call_id = serializers.CharField(source="call.call_id")
    audit_id = serializers.IntegerField(
        source="call.pk", help_text="The call's row in /api/tool-calls/."
    )
    status = serializers.CharField(
        source="call.status",
        help_text="As in the audit: ok, error, timeout or cached (a refusal is a "
        "4xx answer instead).",
    )
    success = serializers.BooleanField()
    result = serializers.JSONField(
        source="response", help_text="What a model would read: the tool's answer."
    )
    error = serializers.CharField(allow_null=True)
    started_at = serializers.DateTimeField(source="call.started_at")
    finished_at = serializers.DateTimeField(source="call.finished_at")
    duration_ms = serializers.IntegerField(source="call.duration_ms")
    attempts = serializers.IntegerField(
        source="call.attempts", help_text="Times the tool ran: 0 if cached."
    )


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "additionalProperties": Condition.model_json_schema()["$defs"][
            "ArgumentCondition"
        ],
    }
)
class ConditionField(serializers.JSONField):
    """A grant's condition on the call's arguments (toolsets.grant_conditions)."""

    def to_internal_value(self, data) -> Condition | None:
        value = super().to_internal_value(data)
        if value is None:
            return None
        try:
            return validated(Condition, value)
        except serializers.ValidationError as exc:
            # Field errors of the condition, one list under `condition`.
            raise serializers.ValidationError(_flat(exc.detail)) from None


def _flat(detail) -> list[str]:
    if isinstance(detail, dict):
        return [
            f"{key}: {text}" for key, value in detail.items() for text in _flat(value)
        ]
    if isinstance(detail, list):
        return [text for item in detail for text in _flat(item)]
    return [str(detail)]


class GrantSerializer(serializers.ModelSerializer):
    """A grant as staff read it."""

    user = serializers.SlugRelatedField(slug_field="username", read_only=True)
    group = serializers.SlugRelatedField(slug_field="name", read_only=True)
    toolset = serializers.SlugRelatedField(slug_field="name", read_only=True)
    tool = serializers.SlugRelatedField(slug_field="full_name", read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    active = serializers.SerializerMethodField()
    condition = ConditionField(
        read_only=True,
        help_text="Per argument: enum, pattern, prefix, minimum, maximum; null: "
        "every call.",
    )
    condition_text = serializers.SerializerMethodField(
        help_text="The condition in words; empty when none."
    )

    class Meta:
        model = Grant
        fields = [
            "id",
            "user",
            "group",
            "toolset",
            "tool",
            "effect",
            "expires_at",
            "condition",
            "otherwise",
            "approvals_required",
            "condition_text",
            "active",
            "created_by",
            "created_at",
        ]

    def get_active(self, grant: Grant) -> bool:
        return grant.expires_at is None or grant.expires_at > timezone.now()

    def get_condition_text(self, grant: Grant) -> str:
        condition = parse_condition(grant.condition)
        return condition.describe() if condition is not None else ""


class GrantCreateSerializer(serializers.Serializer):
    """`{"user"|"group": name, "toolset"|"tool": name, "effect", "expires_at"?,
    "condition"?, "otherwise"?}`."""

    user = serializers.CharField(required=False, help_text="A username.")
    group = serializers.CharField(required=False, help_text="A group name.")
    toolset = serializers.CharField(required=False, help_text="A toolset name.")
    tool = serializers.CharField(required=False, help_text="`<toolset>.<tool>`.")
    effect = serializers.ChoiceField(choices=Grant.Effect.choices)
    expires_at = serializers.DateTimeField(required=False, allow_null=True)
    condition = ConditionField(
        required=False,
        allow_null=True,
        help_text="An allow on a tool only: per argument, what it must be "
        '(enum, pattern, prefix, minimum, maximum), e.g. {"path": {"prefix": '
        '"reports/"}}. Checked against the tool\'s arguments.',
    )
    otherwise = serializers.ChoiceField(
        choices=Grant.Otherwise.choices,
        default=Grant.Otherwise.DENY,
        help_text="What a call outside the condition gets: deny, or approval (held "
        "for a person).",
    )
    approvals_required = serializers.IntegerField(
        min_value=1,
        max_value=MAX_APPROVALS,
        default=1,
        help_text="With `otherwise: approval`: how many different people must "
        "approve a call outside the condition (2: the two-person rule).",
    )

    def validate_user(self, value: str):
        user = get_user_model().objects.filter(username=value).first()
        if user is None:
            raise serializers.ValidationError(f"No user named {value!r}.")
        return user

    def validate_group(self, value: str) -> Group:
        group = Group.objects.filter(name=value).first()
        if group is None:
            raise serializers.ValidationError(f"No group named {value!r}.")
        return group

    def validate_toolset(self, value: str) -> Toolset:
        toolset = Toolset.objects.filter(name=value).first()
        if toolset is None:
            raise serializers.ValidationError(f"No toolset named {value!r}.")
        return toolset

    def validate_tool(self, value: str) -> Tool:
        tool = Tool.objects.filter(full_name=value).first()
        if tool is None:
            raise serializers.ValidationError(
                f"No tool named {value!r}; name it `<toolset>.<tool>`."
            )
        return tool

    def validate_expires_at(self, value):
        if value is not None and value <= timezone.now():
            raise serializers.ValidationError("Must be in the future.")
        return value

    def validate(self, attrs: dict) -> dict:
        errors = {}
        if ("user" in attrs) == ("group" in attrs):
            errors["user"] = ["Name exactly one of user and group."]
        if ("toolset" in attrs) == ("tool" in attrs):
            errors["toolset"] = ["Name exactly one of toolset and tool."]
        if errors:
            raise serializers.ValidationError(errors)
        condition = attrs.get("condition")
        if condition is not None:
            self._check_condition(condition, attrs)
        return attrs

    def _check_condition(self, condition: Condition, attrs: dict) -> None:
        if "tool" not in attrs:
            raise serializers.ValidationError(
                {
                    "condition": [
                        "A condition names a tool's arguments: put it on a grant "
                        "of one tool, not a toolset."
                    ]
                }
            )
        if attrs["effect"] != Grant.Effect.ALLOW:
            raise serializers.ValidationError(
                {"condition": ["Only an allow carries a condition."]}
            )
        tool = attrs["tool"]
        try:
            check_condition(condition, tool=tool.full_name, parameters=tool.parameters)
        except ConditionError as exc:
            raise serializers.ValidationError({"condition": exc.errors}) from None


class DecisionSerializer(serializers.Serializer):
    allowed = serializers.BooleanField()
    rule = serializers.CharField(help_text="The rule that decided, in words.")
    reason = serializers.ChoiceField(
        choices=["unknown", "missing", "disabled", "deny", "allow", "policy"]
    )
    grant = serializers.IntegerField(allow_null=True, help_text="The deciding grant.")
    condition = serializers.JSONField(
        allow_null=True,
        help_text="The deciding allow's condition on the call's arguments; null: none.",
    )
    otherwise = serializers.CharField(
        allow_null=True, help_text="deny or approval, with a condition; else null."
    )
    condition_text = serializers.CharField(help_text="The condition in words.")


class ToolCellSerializer(DecisionSerializer):
    full_name = serializers.CharField()


class ToolsetRowSerializer(DecisionSerializer):
    name = serializers.CharField()
    tools = ToolCellSerializer(many=True)


class AccessUserSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class AccessMatrixSerializer(serializers.Serializer):
    """Every toolset and tool, and what one user gets, with the deciding rule."""

    user = AccessUserSerializer()
    toolsets = ToolsetRowSerializer(many=True)


class AgentToolSerializer(serializers.Serializer):
    """A tool a user may use now on an agent."""

    full_name = serializers.CharField()
    name = serializers.CharField(help_text="The name the model calls.")
    toolset = serializers.CharField()
    agent = serializers.CharField(help_text="The ADK agent (in the tree) that has it.")
    description = serializers.CharField()
    risk = serializers.CharField()
    rule = serializers.CharField()


class ToolCallSerializer(serializers.ModelSerializer):
    """One audited tool call; a held one, with who decided it and when.

    Its arguments are stored redacted, and read through the rule again (as events
    are), for a row stored before the rule reached them.
    """

    user = serializers.SlugRelatedField(slug_field="username", read_only=True)
    decided_by = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        help_text="Who approved or rejected a held call; null if nobody did.",
    )
    args_edited_by = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        help_text="Who changed the call's arguments before approving it.",
    )

    class Meta:
        model = ToolCall
        fields = [
            "id",
            "user",
            "session_id",
            "run_id",
            "invocation_id",
            "agent",
            "adk_agent",
            "call_id",
            "tool_name",
            "tool_full_name",
            "args",
            "result_summary",
            "raw_result_summary",
            "status",
            "access_rule",
            "decided_by",
            "decided_at",
            "asked_args",
            "approved_args",
            "args_edited_by",
            "started_at",
            "finished_at",
            "duration_ms",
            "attempts",
        ]

    def to_representation(self, instance: ToolCall) -> dict:
        data = super().to_representation(instance)
        data["args"] = redact_secrets(data["args"])
        for name in ("asked_args", "approved_args"):
            if data[name] is not None:
                data[name] = redact_secrets(data[name])
        return data
