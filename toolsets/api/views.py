"""The toolsets API: the catalog, grants, effective access, the audit of calls."""

from datetime import UTC, datetime

from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet
from django.http import StreamingHttpResponse
from django.utils.dateparse import parse_datetime
from django.utils.timezone import is_naive, make_aware
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.renderers import BrowsableAPIRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.changes import ActorFromRequest
from agents.client_input import (
    ID_CONVERTER,
    NAME_CONVERTER,
    JSONRenderer,
    id_list_param,
    parse_whole_number,
    validated,
    whole_number_param,
)
from agents.runtime import AgentNotAvailable, build_agent_tree, get_usable_agent
from toolsets import access, catalog, grants, policies
from toolsets.api.exports import export_response
from toolsets.api.renderers import CSVRenderer, JSONLinesRenderer
from toolsets.api.serializers import (
    AccessMatrixSerializer,
    AgentToolSerializer,
    GrantCreateSerializer,
    GrantSerializer,
    InvocationSerializer,
    ToolCallSerializer,
    ToolDetailSerializer,
    ToolSerializer,
    ToolsetSerializer,
)
from toolsets.audit import older_than, visible_calls
from toolsets.governance import direct
from toolsets.governance.direct import ToolInput
from toolsets.models import Grant, Tool, ToolCall, Toolset

DEFAULT_CALLS = 1000
MAX_ACCESS_USERS = 100  # `/api/access/?users=`: the Access page asks for a page (12)
MAX_SUBJECTS = 1000  # `/api/grants/?users=&groups=`
MAX_CALLS = 50_000  # the JSON list's; an export streams them all
EXPORT_FORMATS = {"csv", "jsonl"}


class IsStaffOrReadOnly(permissions.BasePermission):
    def has_permission(self, request: Request, view) -> bool:
        return request.method in permissions.SAFE_METHODS or request.user.is_staff


class ToolsetViewSet(
    ActorFromRequest,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Toolsets of the catalog. Everyone reads; staff set policy and kill switch."""

    serializer_class = ToolsetSerializer
    permission_classes = [permissions.IsAuthenticated, IsStaffOrReadOnly]
    lookup_field = "name"
    lookup_value_converter = NAME_CONVERTER  # dots too: <toolset>.<tool>
    queryset = Toolset.objects.prefetch_related("tools")

    def perform_update(self, serializer: ToolsetSerializer) -> None:
        grants.update_toolset(toolset=serializer.instance, **serializer.validated_data)


@extend_schema(
    parameters=[OpenApiParameter("toolset", str, description="Only this toolset.")]
)
class ToolViewSet(
    ActorFromRequest,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Tools of the catalog, by `<toolset>.<tool>`. Staff set risk and kill switch."""

    serializer_class = ToolSerializer
    permission_classes = [permissions.IsAuthenticated, IsStaffOrReadOnly]
    lookup_field = "full_name"
    lookup_value_converter = NAME_CONVERTER  # dots too: <toolset>.<tool>

    def get_serializer_class(self) -> type[ToolSerializer]:
        # One tool shows its effective policy too, which finds the tool's code.
        return ToolSerializer if self.action == "list" else ToolDetailSerializer

    def get_queryset(self) -> QuerySet[Tool]:
        tools = Tool.objects.select_related("toolset", "approver_group")
        toolset = self.request.query_params.get("toolset")
        return tools.filter(toolset__name=toolset) if toolset else tools

    @extend_schema(
        request=ToolInput,
        responses={
            200: InvocationSerializer,
            409: OpenApiResponse(
                description="The call needs a person's approval or a credential: "
                "call it from a session."
            ),
            429: OpenApiResponse(
                description="The tool's rate limit, or its concurrency limit."
            ),
        },
    )
    @action(
        detail=True, methods=["post"], permission_classes=[permissions.IsAuthenticated]
    )
    def invoke(self, request: Request, full_name: str) -> Response:
        """Run the tool now, outside any turn, governed and audited as a model's call.

        The body is `{"args": {...}}`. A tool that ran answers 200, whether it
        succeeded, failed or timed out; a refusal is a 4xx: 403 denied, 400 bad
        arguments, 429 rate limited or busy, 409 needs a person.
        """
        body = validated(ToolInput, request.data)
        invocation = async_to_sync(direct.ainvoke_tool)(
            user=request.user, full_name=full_name, args=body.args
        )
        return Response(InvocationSerializer(invocation).data)

    def perform_update(self, serializer: ToolSerializer) -> None:
        changes = dict(serializer.validated_data)
        if "policy" in changes:  # no access changes: nobody's tools_changed
            policies.set_policy(tool=serializer.instance, policy=changes.pop("policy"))
        if changes:
            grants.update_tool(tool=serializer.instance, **changes)


@extend_schema(
    parameters=[
        OpenApiParameter("user", str, description="Grants to this username."),
        OpenApiParameter("group", str, description="Grants to this group."),
        OpenApiParameter("toolset", str, description="Grants on this toolset."),
        OpenApiParameter("tool", str, description="Grants on this tool."),
        OpenApiParameter("effect", str, enum=["allow", "deny"]),
        OpenApiParameter(
            "users",
            str,
            description="Comma-separated user ids: with `groups`, only the grants "
            "to these users or groups.",
        ),
        OpenApiParameter("groups", str, description="Comma-separated group ids."),
    ]
)
class GrantViewSet(
    ActorFromRequest,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Grants (staff only). POST grants or denies; DELETE revokes."""

    serializer_class = GrantSerializer
    permission_classes = [permissions.IsAdminUser]
    lookup_value_converter = ID_CONVERTER
    queryset = Grant.objects.all()  # for the schema; get_queryset() filters it

    def get_queryset(self) -> QuerySet[Grant]:
        grants = Grant.objects.select_related(
            "user", "group", "toolset", "tool", "created_by"
        )
        filters = {
            "user": "user__username",
            "group": "group__name",
            "toolset": "toolset__name",
            "tool": "tool__full_name",
            "effect": "effect",
        }
        effect = self.request.query_params.get("effect")
        if effect and effect not in Grant.Effect.values:
            raise ValidationError({"effect": ["allow or deny."]})
        params = self.request.query_params
        user_ids = id_list_param(params, "users", maximum_count=MAX_SUBJECTS)
        group_ids = id_list_param(params, "groups", maximum_count=MAX_SUBJECTS)
        if user_ids is not None or group_ids is not None:
            # The grants of these subjects only (the Access page: the columns shown).
            grants = grants.filter(
                Q(user_id__in=user_ids or []) | Q(group_id__in=group_ids or [])
            )
        for param, lookup in filters.items():
            value = self.request.query_params.get(param)
            if value:
                grants = grants.filter(**{lookup: value})
        return grants

    @extend_schema(
        request=GrantCreateSerializer,
        responses={201: GrantSerializer, 200: GrantSerializer},
    )
    def create(self, request: Request) -> Response:
        """Grant or deny; the same subject and target again replaces the grant (200).

        An allow on a tool may carry a `condition` on the call's arguments; a call
        outside it is denied, or held for approval (`otherwise`).
        """
        data = GrantCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        grant, created = grants.grant_tool(
            target=values.get("tool") or values["toolset"],
            effect=values["effect"],
            user=values.get("user"),
            group=values.get("group"),
            expires_at=values.get("expires_at"),
            condition=values.get("condition"),
            otherwise=values["otherwise"],
            approvals_required=values["approvals_required"],
            created_by=request.user,
        )
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(GrantSerializer(grant).data, status=code)

    def perform_destroy(self, instance: Grant) -> None:
        grants.revoke(grant=instance)


class AccessView(APIView):
    """A user's effective access: every toolset and tool, and the rule that decided.

    With `users=1,2,3` (staff), the same for each of those users at once: a list,
    in that order."""

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "user", int, description="A user id (staff); default: yourself."
            ),
            OpenApiParameter(
                "users",
                str,
                description=f"Comma-separated user ids (staff; at most "
                f"{MAX_ACCESS_USERS}): a list of matrices, one a user, in that order.",
            ),
        ],
        responses={200: AccessMatrixSerializer},
    )
    def get(self, request: Request) -> Response:
        user_ids = id_list_param(
            request.query_params, "users", maximum_count=MAX_ACCESS_USERS
        )
        if user_ids is None:
            user = _user_param(request)
            matrix = access.access_matrix(user_id=user.pk)
            return Response(_matrix_json(user, matrix))
        if request.query_params.get("user") not in (None, ""):
            raise ValidationError({"users": ["Give user or users, not both."]})
        if not request.user.is_staff and user_ids != [request.user.pk]:
            raise PermissionDenied("Only staff can read another user's access.")
        found = get_user_model().objects.in_bulk(user_ids)
        if len(found) != len(user_ids):
            missing = [str(pk) for pk in user_ids if pk not in found]
            raise ValidationError({"users": [f"No such user: {', '.join(missing)}."]})
        matrices = access.access_matrices(user_ids=user_ids)
        return Response([_matrix_json(found[pk], matrices[pk]) for pk in user_ids])


def _matrix_json(user, rows: list[access.ToolsetAccess]) -> dict:
    return {
        "user": {"id": user.pk, "username": user.get_username()},
        "toolsets": [
            {
                "name": row.toolset.name,
                **_decision(row.decision),
                "tools": [
                    {"full_name": name, **_decision(decision)}
                    for name, decision in row.tools
                ],
            }
            for row in rows
        ],
    }


def _user_param(request: Request):
    raw = request.query_params.get("user")
    if raw in (None, ""):
        return request.user
    user_id = parse_whole_number(raw, name="user", minimum=1)
    if user_id != request.user.pk and not request.user.is_staff:
        raise PermissionDenied("Only staff can read another user's access.")
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None:
        raise ValidationError({"user": ["No such user."]})
    return user


def _decision(decision: access.Decision) -> dict:
    return {
        "allowed": decision.allowed,
        "rule": decision.rule,
        "reason": decision.reason,
        "grant": decision.grant_id,
        "condition": decision.condition.as_json() if decision.condition else None,
        "otherwise": decision.otherwise,
        "condition_text": decision.condition.describe() if decision.condition else "",
    }


@extend_schema(
    parameters=[
        OpenApiParameter("user", str, description="User id or username (staff)."),
        OpenApiParameter("agent", str, description="Agent name."),
        OpenApiParameter("tool", str, description="`<toolset>.<tool>` or the name."),
        OpenApiParameter("status", str, enum=list(ToolCall.Status.values)),
        OpenApiParameter("since", datetime, description="Started at or after."),
        OpenApiParameter("until", datetime, description="Started before."),
        OpenApiParameter(
            "before",
            int,
            description="The id of the last call a page showed: the calls after it "
            "in this order (older, or as old with a lower id), so a client reads on "
            "a page at a time, each call once. A call you cannot see is a 400. An "
            "export honours it too (to resume one cut short).",
        ),
        OpenApiParameter(
            "limit",
            int,
            description=f"At most (max {MAX_CALLS}, default {DEFAULT_CALLS}); an "
            "export has every call the filters select unless given a limit.",
        ),
        OpenApiParameter("format", str, enum=["json", "csv", "jsonl"]),
    ]
)
class ToolCallViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """The audit of tool calls, newest first: staff see all, users their own."""

    serializer_class = ToolCallSerializer
    lookup_value_converter = ID_CONVERTER
    queryset = ToolCall.objects.all()  # for the schema; get_queryset() scopes it
    renderer_classes = [
        JSONRenderer,
        BrowsableAPIRenderer,
        CSVRenderer,
        JSONLinesRenderer,
    ]

    def get_queryset(self) -> QuerySet[ToolCall]:
        calls = visible_calls(user=self.request.user).select_related(
            "user", "decided_by", "args_edited_by"
        )
        if self.action != "list":
            return calls
        return _filter_calls(calls, self.request)

    def list(self, request: Request) -> Response | StreamingHttpResponse:
        """The newest calls (`limit`, at most MAX_CALLS); an export (`format=csv` or
        `jsonl`) streams every call the filters select, or `limit` of them."""
        calls = self.get_queryset()
        format_ = request.accepted_renderer.format
        if format_ in EXPORT_FORMATS:
            limit = None
            if request.query_params.get("limit"):
                limit = whole_number_param(
                    request.query_params, "limit", default=0, minimum=1
                )
            return export_response(
                request=request._request, calls=calls, format=format_, limit=limit
            )
        shown = calls[: _limit_param(request.query_params)]
        return Response(self.get_serializer(shown, many=True).data)

    def finalize_response(self, request, response, *args, **kwargs):
        # Errors are JSON whatever export was asked for.
        renderer = getattr(request, "accepted_renderer", None)
        if getattr(response, "exception", False) and renderer is not None:
            if renderer.format in {"csv", "jsonl"}:
                request.accepted_renderer = JSONRenderer()
                request.accepted_media_type = JSONRenderer.media_type
        response = super().finalize_response(request, response, *args, **kwargs)
        if (
            renderer is not None
            and renderer.format == "jsonl"
            and isinstance(response, Response)
        ):
            # DRF drops the Content-Type of an empty body; no calls is still JSON lines.
            response.render()
            response.setdefault("Content-Type", f"{renderer.media_type}; charset=utf-8")
        return response


def _filter_calls(calls: QuerySet[ToolCall], request: Request) -> QuerySet[ToolCall]:
    params = request.query_params
    before = whole_number_param(params, "before", default=0, minimum=1)
    visible = calls
    user = params.get("user")
    if user:
        # Digits (of any script) name an id, which must then be a valid one.
        calls = (
            calls.filter(user_id=parse_whole_number(user, name="user"))
            if user.isdigit()
            else calls.filter(user__username=user)
        )
    if params.get("agent"):
        calls = calls.filter(agent=params["agent"])
    if params.get("tool"):
        tool = params["tool"]
        calls = calls.filter(Q(tool_full_name=tool) | Q(tool_name=tool))
    status_ = params.get("status")
    if status_:
        if status_ not in ToolCall.Status.values:
            choices = ", ".join(ToolCall.Status.values)
            raise ValidationError({"status": [f"One of {choices}."]})
        calls = calls.filter(status=status_)
    if params.get("since"):
        calls = calls.filter(started_at__gte=datetime_param(params, "since"))
    if params.get("until"):
        calls = calls.filter(started_at__lt=datetime_param(params, "until"))
    if before:
        calls = _after_cursor(calls, visible=visible, before=before)
    return calls


def _after_cursor(
    calls: QuerySet[ToolCall], *, visible: QuerySet[ToolCall], before: int
) -> QuerySet[ToolCall]:
    """`calls` after the call `before` (one the user may see, whatever the other
    filters) in the list's order."""
    cursor = visible.filter(pk=before).values("started_at", "id").first()
    if cursor is None:
        # The same answer for a call that never was and another user's.
        raise ValidationError({"before": ["No call with this id that you can see."]})
    return older_than(calls, **cursor)


def datetime_param(params, name: str) -> datetime:
    """The query parameter `name` as an aware datetime in UTC, or a 400."""
    try:
        value = parse_datetime(params[name].replace(" ", "+"))
        if value is not None:
            # In UTC: PostgreSQL refuses an offset past 15:59 ("+20:11").
            return (make_aware(value) if is_naive(value) else value).astimezone(UTC)
    except (ValueError, OverflowError):  # a 13th month; year 1 before UTC
        pass
    raise ValidationError({name: ["An ISO 8601 date and time."]})


def _limit_param(params) -> int:
    limit = whole_number_param(params, "limit", default=DEFAULT_CALLS, minimum=1)
    return min(limit, MAX_CALLS)


class AgentToolsView(APIView):
    """The tools you may use now on an agent (its sub-agents included)."""

    @extend_schema(
        responses={
            200: AgentToolSerializer(many=True),
            404: OpenApiResponse(description="No such agent, or not yours to use."),
            409: OpenApiResponse(
                description="The agent's code does not load (staff read why)."
            ),
        }
    )
    def get(self, request: Request, name: str) -> Response:
        try:
            spec = get_usable_agent(user=request.user, name=name)
        except AgentNotAvailable as exc:
            raise NotFound(str(exc)) from None
        root = build_agent_tree(user=request.user, spec=spec)
        usable = catalog.usable_tools(user_id=request.user.pk, root=root, app_name=name)
        return Response(
            [
                {
                    "full_name": item.tool.full_name,
                    "name": item.tool.name,
                    "toolset": item.binding.toolset.name,
                    "agent": item.binding.agent,
                    "description": item.tool.description,
                    "risk": item.tool.risk,
                    "rule": item.decision.rule,
                }
                for item in usable
            ]
        )
