"""Notices over REST (docs/notices.md): my preferences, staff's webhook
destinations, and the delivery log.

- `GET`/`PUT /api/notices/preferences/`: which channels tell me of each kind of
  request (`{"approval": {"mail": true, "webhook": true}, ...}`).
- `/api/notices/webhooks/` (staff): destinations, the secret write-only.
- `GET /api/notices/deliveries/` (staff): every notice, newest first, with its
  attempts, status and last error; `?status=`, `?request=`, `?before=`.
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers, status, viewsets
from rest_framework.request import Request as HttpRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.api.inputs import JSONParser, validated
from agents.models import Delivery, WebhookDestination
from agents.notices import preferences
from agents.notices.destinations import save_destination
from agents.notices.inputs import DestinationInput, PreferencesInput
from agents.notices.preferences import Channels
from agents.params import ID_CONVERTER, whole_number_param

LIST_LIMIT = 100
LIST_MAX = 200


class ChannelsSerializer(serializers.Serializer):
    mail = serializers.BooleanField()
    webhook = serializers.BooleanField()


class PreferencesSerializer(serializers.Serializer):
    """Which channels tell me of a new request, by its kind."""

    approval = ChannelsSerializer()
    credential = ChannelsSerializer()
    call = ChannelsSerializer()


class PreferencesView(APIView):
    """My notice preferences: mail and my webhooks, per kind of request."""

    parser_classes = [JSONParser]

    @extend_schema(responses=PreferencesSerializer)
    def get(self, request: HttpRequest) -> Response:
        """Which channels tell me of each kind of request (mine, or the defaults)."""
        return Response(_preferences(preferences.preferences_of(user=request.user)))

    @extend_schema(request=PreferencesInput, responses=PreferencesSerializer)
    def put(self, request: HttpRequest) -> Response:
        """Set the channels of the kinds given; the others stay as they were."""
        body = validated(PreferencesInput, request.data)
        chosen = {
            kind: Channels(mail=value.mail, webhook=value.webhook)
            for kind, value in body
            if value is not None
        }
        stored = preferences.set_preferences(user=request.user, channels=chosen)
        return Response(_preferences(stored))


class DestinationSerializer(serializers.ModelSerializer):
    """A webhook destination: its URL's `host` only (a Slack or Teams webhook's URL
    is a credential, kept encrypted); `signed` says whether it has a secret."""

    user = serializers.IntegerField(source="user_id", allow_null=True)
    signed = serializers.SerializerMethodField()

    class Meta:
        model = WebhookDestination
        fields = [
            "id",
            "name",
            "host",
            "format",
            "kinds",
            "user",
            "group",
            "enabled",
            "signed",
            "created_at",
        ]
        read_only_fields = fields

    def get_signed(self, destination: WebhookDestination) -> bool:
        return bool(destination.sealed_secret)


class DestinationViewSet(viewsets.GenericViewSet):
    """Where webhook notices go (staff)."""

    serializer_class = DestinationSerializer
    permission_classes = [permissions.IsAdminUser]
    parser_classes = [JSONParser]
    lookup_value_converter = ID_CONVERTER
    queryset = WebhookDestination.objects.all()

    def list(self, request: HttpRequest) -> Response:
        """Every destination, by name."""
        return Response(self.get_serializer(self.get_queryset(), many=True).data)

    @extend_schema(request=DestinationInput, responses={201: DestinationSerializer})
    def create(self, request: HttpRequest) -> Response:
        """Add a destination: a person's (`user`) or a team's (`group`, or all)."""
        made = save_destination(values=validated(DestinationInput, request.data))
        return Response(self.get_serializer(made).data, status=status.HTTP_201_CREATED)

    def retrieve(self, request: HttpRequest, pk=None) -> Response:
        """One destination."""
        return Response(self.get_serializer(self.get_object()).data)

    @extend_schema(request=DestinationInput, responses=DestinationSerializer)
    def update(self, request: HttpRequest, pk=None) -> Response:
        """Change a destination as a whole (its URL given again); a secret left out
        is kept."""
        values = validated(DestinationInput, request.data)
        changed = save_destination(values=values, destination=self.get_object())
        return Response(self.get_serializer(changed).data)

    def destroy(self, request: HttpRequest, pk=None) -> Response:
        """Remove a destination and its deliveries."""
        self.get_object().delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class DeliverySerializer(serializers.ModelSerializer):
    """One notice and its attempts: the delivery log."""

    request = serializers.IntegerField(source="request_id")
    recipient = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    destination = serializers.IntegerField(source="destination_id", allow_null=True)

    class Meta:
        model = Delivery
        fields = [
            "id",
            "request",
            "channel",
            "recipient",
            "destination",
            "address",
            "status",
            "attempts",
            "last_error",
            "next_attempt_at",
            "created_at",
            "sent_at",
        ]
        read_only_fields = fields


class DeliveryViewSet(viewsets.GenericViewSet):
    """The delivery log (staff): every notice, newest first."""

    serializer_class = DeliverySerializer
    permission_classes = [permissions.IsAdminUser]
    lookup_value_converter = ID_CONVERTER
    queryset = Delivery.objects.select_related("recipient")

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=list(Delivery.Status)),
            OpenApiParameter("request", int, description="Only this request's."),
            OpenApiParameter("before", int, description="Only smaller ids."),
            OpenApiParameter(
                "limit", int, description=f"At most (default {LIST_LIMIT})."
            ),
        ]
    )
    def list(self, request: HttpRequest) -> Response:
        """Newest first, a page at a time (`before`: the last id seen)."""
        params = request.query_params
        rows = self.get_queryset()
        if params.get("status"):
            if params["status"] not in Delivery.Status.values:
                return Response(
                    {"status": [f"Unknown status {params['status']!r}."]}, status=400
                )
            rows = rows.filter(status=params["status"])
        found = whole_number_param(params, "request", default=0)
        if found:
            rows = rows.filter(request_id=found)
        before = whole_number_param(params, "before", default=0)
        if before:
            rows = rows.filter(pk__lt=before)
        limit = min(
            whole_number_param(params, "limit", default=LIST_LIMIT, minimum=1),
            LIST_MAX,
        )
        return Response(self.get_serializer(rows[:limit], many=True).data)

    def retrieve(self, request: HttpRequest, pk=None) -> Response:
        """One delivery."""
        return Response(self.get_serializer(self.get_object()).data)


def _preferences(chosen) -> dict:
    return {
        kind: {"mail": value.mail, "webhook": value.webhook}
        for kind, value in chosen.items()
    }
