"""The change audit over the API, for staff: GET /api/changes/.

Who changed which agent, provider, tool policy or user, and when, newest first, a
page at a time by keyset (agents.changes records them; docs/changes.md).
"""

from django.db.models import Q
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from agents.api.inputs import validated
from agents.cursors import encode_cursor
from agents.inputs import ChangeQuery
from agents.models import Change

PAGE_SIZE = 50


class ChangeSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(
        source="actor_name", help_text="The person's username; blank: nobody known."
    )

    class Meta:
        model = Change
        fields = [
            "id",
            "at",
            "actor",
            "kind",
            "object_id",
            "object_repr",
            "action",
            "changes",
        ]


class ChangePageSerializer(serializers.Serializer):
    results = ChangeSerializer(many=True)
    next = serializers.URLField(allow_null=True)


class ChangeListView(APIView):
    """Staff: the changes people made to what a team governs, newest first."""

    permission_classes = [permissions.IsAdminUser]

    @extend_schema(
        parameters=[
            ChangeQuery,
            OpenApiParameter("cursor", str, description="From the list's `next` link."),
        ],
        responses=ChangePageSerializer,
    )
    def get(self, request: Request) -> Response:
        query = validated(ChangeQuery, request.query_params)
        rows = Change.objects.all()
        if query.kind:
            rows = rows.filter(kind=query.kind)
        if query.object:
            rows = rows.filter(object_id=query.object)
        if query.actor:
            rows = rows.filter(actor_name=query.actor)
        if query.cursor is not None:
            at, pk = query.cursor.at, int(query.cursor.id)
            rows = rows.filter(Q(at__lt=at) | Q(at=at, id__lt=pk))
        page = list(rows.order_by("-at", "-id")[: PAGE_SIZE + 1])
        following = None
        if len(page) > PAGE_SIZE:
            page = page[:PAGE_SIZE]
            last = page[-1]
            following = replace_query_param(
                request.build_absolute_uri(),
                "cursor",
                encode_cursor(at=last.at, id=str(last.pk)),
            )
        return Response(
            {"results": ChangeSerializer(page, many=True).data, "next": following}
        )
