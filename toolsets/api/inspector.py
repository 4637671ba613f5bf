"""The event inspector over REST: GET /api/sessions/{id}/events/{seq}/inspect/.

Its owner or staff only (agents.sessions.access_session): anyone else gets 404.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.runtime import access_session
from toolsets.inspector import inspect

NOT_FOUND = OpenApiResponse(
    description="No such session, not yours, or no event with that seq in it."
)


class InspectedEventIdsSerializer(serializers.Serializer):
    event_id = serializers.CharField()
    invocation_id = serializers.CharField(allow_blank=True)
    run_id = serializers.UUIDField(allow_null=True)
    session_id = serializers.CharField()
    call_ids = serializers.ListField(child=serializers.CharField())


class ModelAnswerSerializer(serializers.Serializer):
    text = serializers.CharField(allow_null=True)
    function_calls = serializers.ListField(child=serializers.CharField())


class ModelTokensSerializer(serializers.Serializer):
    input = serializers.IntegerField(allow_null=True)
    output = serializers.IntegerField(allow_null=True)
    total = serializers.IntegerField(allow_null=True)


class ModelStepSerializer(serializers.Serializer):
    model = serializers.CharField(allow_blank=True)
    agent = serializers.CharField()
    instruction = serializers.CharField(
        allow_blank=True, help_text="The system instruction, secrets redacted, cut."
    )
    tools = serializers.ListField(
        child=serializers.CharField(), help_text="Offered, after governance."
    )
    contents = serializers.IntegerField(allow_null=True)
    answer = ModelAnswerSerializer()
    tokens = ModelTokensSerializer()
    duration_ms = serializers.FloatField()


class InspectedCallSerializer(serializers.Serializer):
    call_id = serializers.CharField()
    tool = serializers.CharField()
    status = serializers.CharField(help_text="The audit status: the policy outcome.")
    decision = serializers.CharField(help_text="`allowed`, or the refusal.")
    rule = serializers.CharField(allow_blank=True, help_text="The deciding rule.")
    check = serializers.CharField(allow_blank=True, help_text="The check that refused.")
    attempts = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField()
    duration_ms = serializers.IntegerField()
    decided_by = serializers.CharField(allow_null=True)
    args = serializers.JSONField(help_text="Secrets redacted.")
    result_summary = serializers.CharField(
        allow_blank=True, help_text="What the model received (secrets redacted)."
    )
    raw_result_summary = serializers.CharField(
        allow_blank=True,
        help_text="The tool's own result when a callback changed it, else blank.",
    )


class InspectionSerializer(serializers.Serializer):
    event = serializers.JSONField(
        help_text="The event's frame, as the timeline gets it."
    )
    ids = InspectedEventIdsSerializer()
    model_step = ModelStepSerializer(allow_null=True)
    tool_calls = InspectedCallSerializer(many=True)


class EventInspectView(APIView):
    """One event of a session, inside: its raw frame, ids, model step, tool calls."""

    @extend_schema(responses={200: InspectionSerializer, 404: NOT_FOUND})
    def get(self, request: Request, pk: str, seq: int) -> Response:
        """The event `seq` of the session: what the model was offered and answered,
        and each tool call's governance decision, rule, outcome and timings."""
        session = access_session(user=request.user, session_id=pk)
        return Response(InspectionSerializer(inspect(session=session, seq=seq)).data)
