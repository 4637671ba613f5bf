"""Shared links over REST (agents.shares; docs/sharing.md).

A session's links, for its owner (staff: list and revoke):
`GET|POST /api/sessions/{id}/shares/`, `DELETE /api/sessions/{id}/shares/{share_id}/`,
`GET /api/sessions/{id}/shares/{share_id}/views/`. The team's setting, read by
everyone signed in and changed by staff: `GET|PATCH /api/share-settings/`. A link
opened, by whoever holds it: `GET /api/shared/{token}/` (what is shared),
`GET /api/shared/{token}/events/` (its events; the first page read is one audited
view) and `POST /api/shared/{token}/fork/` (continue it in a session of one's own).
"""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.api.inputs import JSONParser
from agents.api.serializers import SessionSerializer
from agents.changes import ActorFromRequest
from agents.events.log import EVENTS_BATCH
from agents.events.wire import EventFrameList, frame_from_row, frame_json
from agents.models import Share, ShareView
from agents.params import seq_bound_param, whole_number_param
from agents.sessions import access_session
from agents.shares import fork, links

GONE = "The link was revoked or has expired."


class ShareSerializer(serializers.ModelSerializer):
    status = serializers.SerializerMethodField(
        help_text='"active", "revoked" or "expired".'
    )
    views = serializers.IntegerField(
        source="view_count", read_only=True, help_text="How many times it was opened."
    )
    last_viewed_at = serializers.DateTimeField(read_only=True, allow_null=True)
    revoked_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Share
        fields = [
            "id",
            "status",
            "anyone",
            "upto_seq",
            "created_at",
            "expires_at",
            "revoked_at",
            "revoked_by",
            "views",
            "last_viewed_at",
        ]

    def get_status(self, share: Share) -> str:
        return links.status_of(share)


class NewShareSerializer(ShareSerializer):
    token = serializers.CharField(
        help_text="The link's token, shown this once: only its digest is stored."
    )
    url = serializers.CharField(help_text="The link to hand out: /shared/<token>/.")

    class Meta(ShareSerializer.Meta):
        fields = [*ShareSerializer.Meta.fields, "token", "url"]


class ShareCreateSerializer(serializers.Serializer):
    expires_in_days = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=links.EXPIRY_MAX_DAYS,
        help_text="Null or left out: the link never expires.",
    )
    anyone = serializers.BooleanField(
        default=False,
        help_text="Anyone with the link, not signed in too: only while staff allow it "
        "(GET /api/share-settings/).",
    )


class ShareViewSerializer(serializers.ModelSerializer):
    viewer = serializers.CharField(
        source="viewer_name", help_text="Their username; blank: not signed in."
    )

    class Meta:
        model = ShareView
        fields = ["id", "at", "viewer", "ip", "kind"]


class ShareSettingsSerializer(serializers.Serializer):
    anyone_with_link = serializers.BooleanField(
        help_text="Whether a link may be opened by anyone with it, not signed in."
    )


class SharedSessionSerializer(serializers.Serializer):
    title = serializers.CharField()
    agent = serializers.CharField(help_text="The agent's name.")
    owner = serializers.CharField(help_text="Who shared it (their username).")
    shared_at = serializers.DateTimeField()
    upto_seq = serializers.IntegerField(help_text="The last event shared.")
    anyone = serializers.BooleanField()
    expires_at = serializers.DateTimeField(allow_null=True)


class SessionSharesView(ActorFromRequest, APIView):
    """A session's shared links: its owner makes them; she and staff list them."""

    # JSON only: a form or multipart body (whose parse may find no field) is a 415.
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="sessions_shares_list", responses=ShareSerializer(many=True)
    )
    def get(self, request: Request, pk: str) -> Response:
        session = access_session(user=request.user, session_id=pk)
        shares = links.shares_of(session=session)[:200]
        return Response(ShareSerializer(shares, many=True).data)

    @extend_schema(
        operation_id="sessions_shares_create",
        request=ShareCreateSerializer,
        responses={201: NewShareSerializer},
    )
    def post(self, request: Request, pk: str) -> Response:
        """Share the session as it is now: a read-only link, shown this once."""
        body = ShareCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        session = access_session(user=request.user, session_id=pk)
        share, token = links.create_share(
            session=session, user=request.user, **body.validated_data
        )
        share = links.share_of(session=session, share_id=share.pk)
        path = f"/shared/{token}/"
        out = {
            **ShareSerializer(share).data,
            "token": token,
            "url": request.build_absolute_uri(path),
        }
        return Response(out, status=status.HTTP_201_CREATED)


class SessionShareView(ActorFromRequest, APIView):
    """One link of a session: revoked by its owner or staff."""

    @extend_schema(operation_id="sessions_shares_destroy", responses={204: None})
    def delete(self, request: Request, pk: str, share_id: int) -> Response:
        session = access_session(user=request.user, session_id=pk)
        links.revoke_share(session=session, share_id=share_id, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SessionShareViewsView(APIView):
    """Who opened a link of a session, and when (its owner and staff)."""

    @extend_schema(
        operation_id="sessions_shares_views_list",
        responses=ShareViewSerializer(many=True),
    )
    def get(self, request: Request, pk: str, share_id: int) -> Response:
        session = access_session(user=request.user, session_id=pk)
        share = links.share_of(session=session, share_id=share_id)
        views = links.views_of(share=share)[:500]
        return Response(ShareViewSerializer(views, many=True).data)


class IsStaffToChange(permissions.BasePermission):
    def has_permission(self, request: Request, view) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return bool(request.user and request.user.is_authenticated)
        return bool(request.user and request.user.is_staff)


class ShareSettingsView(ActorFromRequest, APIView):
    """The team's sharing setting: anyone signed in reads it, staff change it."""

    permission_classes = [IsStaffToChange]

    @extend_schema(responses=ShareSettingsSerializer)
    def get(self, request: Request) -> Response:
        row = links.share_settings()
        return Response({"anyone_with_link": row.anyone_with_link})

    @extend_schema(request=ShareSettingsSerializer, responses=ShareSettingsSerializer)
    def patch(self, request: Request) -> Response:
        """Staff: allow links that anyone may open without signing in, or not.
        Switching it off closes every such link at once."""
        body = ShareSettingsSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        row = links.set_share_settings(**body.validated_data)
        return Response({"anyone_with_link": row.anyone_with_link})


class SharedView(APIView):
    """A shared link, opened by whoever holds it (signed in, or anyone if allowed)."""

    permission_classes = [permissions.AllowAny]

    def share(self, request: Request, token: str) -> Share:
        return links.open_share(token=token, user=request.user)


class SharedSessionView(SharedView):
    @extend_schema(
        operation_id="shared_retrieve",
        responses={
            200: SharedSessionSerializer,
            410: OpenApiResponse(description=GONE),
        },
    )
    def get(self, request: Request, token: str) -> Response:
        """What a link shares: the session's title, agent and owner, and how far."""
        share = self.share(request, token)
        session = share.session
        body = {
            "title": session.title,
            "agent": session.app_name,
            "owner": session.owner.get_username() if session.owner else "",
            "shared_at": share.created_at,
            "upto_seq": share.upto_seq,
            "anyone": share.anyone,
            "expires_at": share.expires_at,
        }
        return Response(SharedSessionSerializer(body).data)


class SharedEventsView(SharedView):
    @extend_schema(
        operation_id="shared_events_list",
        responses={200: EventFrameList, 410: OpenApiResponse(description=GONE)},
        parameters=[
            OpenApiParameter(
                "after", int, description="Only events with a greater seq."
            ),
            OpenApiParameter(
                "limit", int, description=f"At most this many (max {EVENTS_BATCH})."
            ),
            OpenApiParameter(
                "before",
                str,
                description="Page back: the newest `limit` shared events with a "
                "smaller seq (`end`: the newest shared).",
            ),
        ],
    )
    def get(self, request: Request, token: str) -> Response:
        """The shared events, as the session's own list shows them (redacted). The
        first page read (`before=end`, or from the start) is audited as a view."""
        params = request.query_params
        after = whole_number_param(params, "after", default=0)
        limit = whole_number_param(params, "limit", default=EVENTS_BATCH)
        paged_back = params.get("before", "") != ""
        before = seq_bound_param(params, "before") if paged_back else None
        share = self.share(request, token)
        rows = links.shared_events(
            share=share,
            after=after,
            before=before,
            paged_back=paged_back,
            limit=limit,
        )
        if (paged_back and before is None) or (not paged_back and after == 0):
            links.record_view(share=share, user=request.user, ip=_address(request))
        return Response([frame_json(frame_from_row(row)) for row in rows])


class SharedForkView(SharedView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        operation_id="shared_fork_create",
        request=None,
        responses={201: SessionSerializer, 410: OpenApiResponse(description=GONE)},
    )
    def post(self, request: Request, token: str) -> Response:
        """Continue the shared conversation in a new session of your own, with the
        same agent: its events copied up to the share, no credential or secret."""
        share = self.share(request, token)
        session = fork.fork_share(share=share, user=request.user)
        links.record_view(
            share=share, user=request.user, ip=_address(request), kind=ShareView.FORK
        )
        return Response(SessionSerializer(session).data, status=status.HTTP_201_CREATED)


def _address(request: Request) -> str | None:
    return request.META.get("REMOTE_ADDR") or None
