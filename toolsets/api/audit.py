"""The audit's aggregates over REST: the Overview's summary of tool calls (read from
the hourly totals kept as calls are audited: toolsets/overview.py), and the
outcome groups every status counts in (toolsets/audit.py, the one definition)."""

from datetime import datetime, timedelta

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from toolsets.api.views import datetime_param
from toolsets.audit import GROUPS
from toolsets.overview import (
    BUCKET_HOURS,
    MAX_BUCKETS,
    TooManyBuckets,
    overview_scope,
    summarize_calls,
)

DEFAULT_SPAN = timedelta(hours=24)


class OutcomeGroupSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    statuses = serializers.ListField(child=serializers.CharField())


class KpisSerializer(serializers.Serializer):
    calls = serializers.IntegerField(help_text="Each call once (approved runs once).")
    ran = serializers.IntegerField()
    failed = serializers.IntegerField(help_text="Of those that ran: error, timeout.")
    denied = serializers.IntegerField()
    approved = serializers.IntegerField()
    rejected = serializers.IntegerField()
    expired = serializers.IntegerField()
    awaiting = serializers.IntegerField()
    p95_ms = serializers.IntegerField(
        allow_null=True,
        help_text="Of the calls that ran, bucket-accurate: the upper bound of the "
        "latency bucket that holds it (10 ms, 25, 50, 100, 250, 500 ms, 1 s, 2.5, 5, "
        "10, 30, 60 s), or the longest call if less.",
    )
    tools = serializers.IntegerField(help_text="Distinct tools called.")


class BucketSerializer(serializers.Serializer):
    start = serializers.DateTimeField()
    counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="Calls by outcome group."
    )


class ToolSpeedSerializer(serializers.Serializer):
    tool = serializers.CharField()
    calls = serializers.IntegerField()
    p50_ms = serializers.IntegerField(help_text="Bucket-accurate, as the KPI's p95.")
    p95_ms = serializers.IntegerField(help_text="Bucket-accurate, as the KPI's p95.")


class DenialSerializer(serializers.Serializer):
    user = serializers.CharField(allow_null=True)
    tool = serializers.CharField()
    count = serializers.IntegerField()


class OverviewSerializer(serializers.Serializer):
    since = serializers.DateTimeField(
        help_text="The start of the hour (UTC) that holds the since asked for "
        "(with 1d buckets, of its day): the totals are hourly."
    )
    until = serializers.DateTimeField()
    bucket = serializers.CharField()
    groups = OutcomeGroupSerializer(many=True)
    kpis = KpisSerializer()
    buckets = BucketSerializer(many=True)
    slowest = ToolSpeedSerializer(many=True)
    denials = DenialSerializer(many=True)


class ToolCallSummaryView(APIView):
    """The Overview of the tool calls you may read (staff: everyone's), from the
    hourly totals: whole hours, percentiles to their latency bucket."""

    @extend_schema(
        parameters=[
            OpenApiParameter("since", datetime, description="Default: a day ago."),
            OpenApiParameter("until", datetime, description="Default: now."),
            OpenApiParameter("bucket", str, enum=list(BUCKET_HOURS)),
        ],
        responses=OverviewSerializer,
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        until = (
            datetime_param(params, "until") if params.get("until") else timezone.now()
        )
        since = datetime_param(params, "since") if params.get("since") else None
        if since is None:
            try:
                since = until - DEFAULT_SPAN
            except OverflowError:  # until in the first day of year 1
                raise ValidationError({"until": ["Too early."]}) from None
        bucket = params.get("bucket") or "1h"
        if bucket not in BUCKET_HOURS:
            raise ValidationError({"bucket": [f"One of {', '.join(BUCKET_HOURS)}."]})
        if since >= until:
            raise ValidationError({"since": ["Before until."]})
        try:
            overview = summarize_calls(
                user_id=overview_scope(user=request.user),
                since=since,
                until=until,
                bucket=bucket,
            )
        except TooManyBuckets:
            message = f"At most {MAX_BUCKETS} buckets: a larger bucket or less time."
            raise ValidationError({"bucket": [message]}) from None
        return Response(OverviewSerializer(overview).data)


class OutcomeGroupsView(APIView):
    """The groups each audit status counts in, in the order charts stack them."""

    @extend_schema(responses=OutcomeGroupSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(OutcomeGroupSerializer(GROUPS, many=True).data)
