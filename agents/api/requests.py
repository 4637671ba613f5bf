"""Requests over REST: one inbox for every pause for a person, and one answer.

`/api/requests/` lists what waits on the signed-in user's answer (approvals,
results to post, credentials), or with `?mine=1` what she asked of others; each
request reads the same for every kind (agents.requests.wording). The older
endpoints by kind (approvals, auth-requests, calls) stay as they were, for a
session's requests; the approval of a call through the MCP gateway (no session;
its `agent` is the client's name, its `session_title` "MCP client <name>") is
here only, and its answer resumes no Run (`run` null).
"""

from django.db.models import Q
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request as HttpRequest
from rest_framework.response import Response

from agents.answers.answer import Decided, access_by_id, answer_by_id, decide_many
from agents.api.inputs import JSONParser, validated
from agents.api.oauth2 import redirect_uri
from agents.api.serializers import RunSerializer
from agents.api.views import _run_response
from agents.credentials import answer_fields
from agents.inputs import (
    BulkDecisionInput,
    CallResultInput,
    CredentialAnswer,
    DecisionInput,
)
from agents.models import Request
from agents.oauth2 import authorization_url
from agents.params import ID_CONVERTER, bool_param, whole_number_param
from agents.requests import inbox, rules, wording

LIST_LIMIT = 100
LIST_MAX = 200
TITLE_CHARS = 80
CLOSED = (
    "Answered, decided or expired before: nothing is left to answer"
    " (`already_answered`, `already_decided`, `expired`)."
)


class ApprovalByField(serializers.Serializer):
    """One person's approval of a request that needs several."""

    by = serializers.CharField(help_text="Who approved.")
    at = serializers.DateTimeField(help_text="When.")
    comment = serializers.CharField(help_text="Her comment, if any.")


class RequestSerializer(serializers.ModelSerializer):
    """A pause for a person, as every kind reads: what, why, who, until when."""

    session = serializers.CharField(
        source="session_id",
        read_only=True,
        allow_null=True,
        help_text="The session it pauses; null for an MCP gateway call's approval.",
    )
    session_title = serializers.SerializerMethodField()
    title = serializers.SerializerMethodField()
    reason = serializers.SerializerMethodField()
    requester = serializers.SerializerMethodField()
    who_may_answer = serializers.SerializerMethodField()
    may_answer = serializers.SerializerMethodField(
        help_text="Whether the signed-in user may answer it now (it is pending)."
    )
    may_remember = serializers.SerializerMethodField(
        help_text='Whether the signed-in user may approve it with "remember": every'
        " later call of its tool in this session is approved at once."
    )
    answered_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    run = serializers.UUIDField(source="run_id", read_only=True, allow_null=True)
    answer_run = serializers.UUIDField(
        source="answer_run_id", read_only=True, allow_null=True
    )
    approvals = serializers.SerializerMethodField(
        help_text="Who approved it so far, first first, when it needs several "
        "people's approvals (approvals_required); one approval deciding it is "
        "`answered_by`."
    )
    args_edited_by = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="Who changed the call's arguments before approving it.",
    )
    resume_id = serializers.CharField(
        read_only=True,
        help_text="The id of the call the timeline shows for it, when not call_id: "
        "a workflow tool node's approval (`wf_tool_confirmation:<node path>`). "
        "Else empty.",
    )
    response = serializers.SerializerMethodField(
        help_text="An approval rejected with a text in the tool's place: that "
        "text, which the caller read as the tool's answer. Else null."
    )

    class Meta:
        model = Request
        fields = [
            "id",
            "kind",
            "status",
            "session",
            "session_title",
            "agent",
            "call_id",
            "tool_call_id",
            "resume_id",
            "tool_name",
            "args",
            "title",
            "description",
            "reason",
            "requester",
            "answer_group",
            "who_may_answer",
            "may_answer",
            "may_remember",
            "created_at",
            "expires_at",
            "answered_by",
            "answered_at",
            "comment",
            "approvals_required",
            "approvals",
            "approved_args",
            "args_edited_by",
            "response",
            "scheme",
            "run",
            "answer_run",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "args": {"help_text": "The call's arguments as asked (redacted)."},
            "approved_args": {
                "help_text": "The arguments an approver changed the call to "
                "(redacted); null: approved, or waiting, as asked."
            },
        }

    def get_session_title(self, request: Request) -> str:
        if request.session_id is None:
            return f"MCP client {request.client}"
        first = " ".join((getattr(request, "first_message", None) or "").split())
        if len(first) > TITLE_CHARS:
            first = first[: TITLE_CHARS - 1] + "…"
        agent = request.session.app_name
        return f"{agent}: {first}" if first else agent

    def get_title(self, request: Request) -> str:
        return wording.title(request)

    def get_reason(self, request: Request) -> str:
        return wording.reason(request)

    def get_requester(self, request: Request) -> str | None:
        owner = request.requester
        return owner.get_username() if owner is not None else None

    def get_who_may_answer(self, request: Request) -> str:
        return wording.who_may_answer(request)

    @extend_schema_field(ApprovalByField(many=True))
    def get_approvals(self, request: Request) -> list[dict]:
        return [
            {
                "by": row.approver.get_username(),
                "at": serializers.DateTimeField().to_representation(row.created_at),
                "comment": row.comment,
            }
            for row in request.approvals.all()
        ]

    def get_response(self, request: Request) -> str | None:
        if request.kind != Request.Kind.APPROVAL:
            return None
        stored = request.response if isinstance(request.response, dict) else {}
        text = stored.get("response")
        return text if isinstance(text, str) else None

    def get_may_answer(self, request: Request) -> bool:
        if not _is_open(request):
            return False
        if any(row.approver_id == self._user.pk for row in request.approvals.all()):
            return False  # She approved it: it waits for another person.
        rule = getattr(request, "user_may_answer", None)
        if rule is None:
            rule = rules.may_answer(user=self._user, request=request)
        return bool(rule)

    def get_may_remember(self, request: Request) -> bool:
        return _is_open(request) and rules.may_remember(
            user=self._user, request=request
        )

    def get_fields(self) -> dict[str, serializers.Field]:
        # `fields` names a serializer's own fields: declared here, not as an attribute.
        found = {}
        for name, field in super().get_fields().items():
            found[name] = field
            if name == "scheme":
                found["fields"] = serializers.SerializerMethodField(
                    method_name="get_answer_fields",
                    help_text="A credential's: the fields its answer gives; else empty.",
                )
                found["authorization_url"] = serializers.SerializerMethodField(
                    help_text="An OAuth2 sign-in's: open it; the provider's redirect "
                    "to /api/oauth2/callback/ answers the request. Else null.",
                )
        return found

    def get_authorization_url(self, request: Request) -> str | None:
        return authorization_url(
            request, redirect_uri=redirect_uri(self.context["request"])
        )

    def get_answer_fields(self, request: Request) -> list[str]:
        if request.kind != Request.Kind.CREDENTIAL:
            return []
        return answer_fields(request)

    @property
    def _user(self):
        return self.context["request"].user


class AnswerSerializer(serializers.Serializer):
    """What an answer started: the Run that resumes the agent (none for a gateway
    call's approval: the waiting client runs it), and the request."""

    run = RunSerializer(allow_null=True)
    request = RequestSerializer()


class DecidedSerializer(serializers.Serializer):
    """What one decision of many did: `decided` (approved or rejected), `counted`
    (one approval of several: it waits for another person), or `refused`, with
    the refusal's code and words, and nothing changed."""

    id = serializers.IntegerField(source="request_id")
    outcome = serializers.SerializerMethodField()
    status = serializers.SerializerMethodField(
        help_text="The request's status after it; null when refused."
    )
    run = serializers.SerializerMethodField(
        help_text="The id of the Run that resumes its agent, if one did."
    )
    code = serializers.SerializerMethodField(help_text="A refusal's code.")
    detail = serializers.SerializerMethodField(help_text="A refusal, in words.")

    def get_outcome(self, decided: Decided) -> str:
        if decided.error is not None:
            return "refused"
        if decided.request.status == Request.Status.PENDING:
            return "counted"
        return "decided"

    def get_status(self, decided: Decided) -> str | None:
        return decided.request.status if decided.request is not None else None

    def get_run(self, decided: Decided) -> str | None:
        return str(decided.run.pk) if decided.run is not None else None

    def get_code(self, decided: Decided) -> str | None:
        return decided.error.code if decided.error is not None else None

    def get_detail(self, decided: Decided) -> str | None:
        return str(decided.error) if decided.error is not None else None


# The body of an answer, by the request's kind (agents.inputs).
INPUTS = {
    Request.Kind.APPROVAL: DecisionInput,
    Request.Kind.CALL: CallResultInput,
    Request.Kind.CREDENTIAL: CredentialAnswer,
}


class RequestViewSet(viewsets.GenericViewSet):
    """Everything waiting on my answer (approvals, results, credentials), or mine."""

    serializer_class = RequestSerializer
    lookup_value_converter = ID_CONVERTER

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "status",
                str,
                enum=list(inbox.STATUSES),
                description="pending (the default), all, or one status.",
            ),
            OpenApiParameter(
                "mine",
                bool,
                description="My own requests that wait on others, or were answered,"
                " instead of those waiting on me.",
            ),
            OpenApiParameter("session", str, description="Only this session's."),
            OpenApiParameter(
                "kind",
                str,
                enum=[k.value for k in Request.Kind],
                description="Only requests of this kind.",
            ),
            OpenApiParameter(
                "tool",
                str,
                description="Only requests about this tool (its name as the "
                "request names it): the inbox's filter before deciding many.",
            ),
            OpenApiParameter(
                "limit",
                int,
                description=f"At most (default {LIST_LIMIT}, max {LIST_MAX}).",
            ),
            OpenApiParameter(
                "before",
                int,
                description="Only requests with a smaller id: the next page.",
            ),
        ],
        responses=RequestSerializer(many=True),
    )
    def list(self, request: HttpRequest) -> Response:
        """Newest first: pending requests I may answer (or, with ?mine=1, my own)."""
        params = request.query_params
        status = params.get("status") or inbox.PENDING
        if status not in inbox.STATUSES:
            raise ValidationError({"status": [f"Unknown status {status!r}."]})
        if bool_param(params, "mine"):
            rows = inbox.requests_of(user=request.user, status=status)
        else:
            rows = inbox.inbox_of(user=request.user, status=status)
        rows = rows.filter(_page(params))
        if params.get("session"):
            rows = rows.filter(session_id=params["session"])
        if params.get("kind"):
            if params["kind"] not in Request.Kind.values:
                raise ValidationError({"kind": [f"Unknown kind {params['kind']!r}."]})
            rows = rows.filter(kind=params["kind"])
        if params.get("tool"):
            rows = rows.filter(tool_name=params["tool"])
        limit = min(
            whole_number_param(params, "limit", default=LIST_LIMIT, minimum=1),
            LIST_MAX,
        )
        return Response(self.get_serializer(rows[:limit], many=True).data)

    @extend_schema(
        responses=inline_serializer(
            "RequestCount", {"count": serializers.IntegerField()}
        )
    )
    @action(detail=False, methods=["get"])
    def count(self, request: HttpRequest) -> Response:
        """How many pending requests wait on my answer (the inbox's badge)."""
        return Response({"count": inbox.count_waiting(user=request.user)})

    def retrieve(self, request: HttpRequest, pk=None) -> Response:
        """One request I may answer, or made."""
        found = inbox.readable(user=request.user, request_id=pk)
        return Response(self.get_serializer(found).data)

    @extend_schema(
        request=PolymorphicProxySerializer(
            component_name="RequestAnswer",
            serializers=[DecisionInput, CallResultInput, CredentialAnswer],
            resource_type_field_name=None,
        ),
        responses={
            200: AnswerSerializer,
            202: AnswerSerializer,
            409: OpenApiResponse(description=CLOSED),
        },
        parameters=[
            OpenApiParameter(
                "wait", bool, description="Answer when the resumed turn has ended."
            )
        ],
    )
    @action(detail=True, methods=["post"], parser_classes=[JSONParser])
    def answer(self, request: HttpRequest, pk=None) -> Response:
        """Answer by the request's kind: an approval `{"approved", "comment"?,
        "remember"?}`, a call `{"response": {...}}`, a credential its scheme's fields.
        The agent resumes."""
        found = access_by_id(user=request.user, request_id=pk)
        body = validated(INPUTS[found.kind], request.data)
        run = answer_by_id(
            user=request.user, request_id=found.pk, answer=_answer_of(body)
        )
        resumed = _run_response(request, run) if run else Response(None)
        answered = inbox.readable(user=request.user, request_id=found.pk)
        resumed.data = {
            "run": resumed.data,
            "request": self.get_serializer(answered).data,
        }
        return resumed

    @extend_schema(
        request=BulkDecisionInput,
        responses={200: DecidedSerializer(many=True)},
    )
    @action(detail=False, methods=["post"], parser_classes=[JSONParser])
    def decide(self, request: HttpRequest) -> Response:
        """Approve or reject many approvals at once, with one comment: each on its
        own, audited on its own; the answer says per id what happened."""
        body = validated(BulkDecisionInput, request.data)
        decided = decide_many(
            user=request.user,
            request_ids=body.ids,
            approved=body.approved,
            comment=body.comment,
        )
        context = self.get_serializer_context()
        return Response(DecidedSerializer(decided, many=True, context=context).data)


def _answer_of(body) -> dict:
    """An answer body as the answer path takes it, by its kind."""
    if isinstance(body, DecisionInput):
        return body.answer()
    if isinstance(body, CallResultInput):
        return body.response
    return body.model_dump(exclude_none=True)


def _page(params) -> Q:
    before = whole_number_param(params, "before", default=0)
    return Q(pk__lt=before) if before else Q()


def _is_open(request: Request) -> bool:
    """Pending, in a session still open: an answer can still go to the agent."""
    if request.status != Request.Status.PENDING:
        return False
    return request.session_id is None or not request.session.closed_at
