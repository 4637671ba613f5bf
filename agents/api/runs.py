"""Stopping a turn and sending the last message again, over REST:
`POST /api/runs/{id}/cancel/` (agents.turns.cancel),
`POST /api/sessions/{id}/regenerate/` (agents.turns.regenerate), and a session's
queue of turns: `GET /api/sessions/{id}/queue/`, `POST .../queue/cancel/`.
"""

from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.api.inputs import JSONParser, validated
from agents.api.serializers import RunSerializer
from agents.api.views import TOO_MANY_TURNS
from agents.inputs import CancelInput, QueueCancelInput
from agents.params import bool_param
from agents.sessions import access_session
from agents.turns import cancel, regenerate, start
from project.errors import DomainError

RUN_ENDED = (
    "The run has already ended (succeeded, failed, waiting or cancelled): "
    "nothing to stop."
)


class RunMismatch(DomainError):
    """A body's `run` names another run than the URL."""

    field = "run"
    code = "run_mismatch"

    def __init__(self) -> None:
        super().__init__(_("Leave `run` out, or give the run the URL names."))


class RunCancelView(APIView):
    """Stop a queued or running turn: it ends cancelled, at once.

    The model call and any async tool in flight are cancelled, the audit notes the
    calls cut short, the run's pending requests expire, `run_finished` (status
    cancelled) reaches every open page, and the session takes its next message.
    The session's owner or staff only; anyone else reads 404.
    """

    @extend_schema(
        request=CancelInput,
        responses={200: RunSerializer, 409: OpenApiResponse(description=RUN_ENDED)},
    )
    def post(self, request: Request, pk) -> Response:
        body = validated(CancelInput, request.data or {})
        if body.run is not None and body.run != pk:
            raise RunMismatch()
        run = cancel.cancel_run(user=request.user, run_id=pk)
        return Response(RunSerializer(run).data)


class RegenerateView(APIView):
    """Regenerate the last answer: the session's last user message is sent again
    as a new turn; the earlier events stay in the log. (To edit that message
    and resend it, send the edited text as a new message.)"""

    @extend_schema(
        request=None,
        responses={
            202: RunSerializer,
            200: RunSerializer,
            429: OpenApiResponse(description=TOO_MANY_TURNS),
        },
        parameters=[
            OpenApiParameter(
                "wait", bool, description="Answer when the turn has ended."
            )
        ],
    )
    def post(self, request: Request, pk: str) -> Response:
        session = access_session(user=request.user, session_id=pk)
        run = regenerate.regenerate_turn(session=session, user=request.user)
        if bool_param(request.query_params, "wait"):
            run = start.wait_for_run(run=run, timeout=settings.TOOLCRIB_WAIT_TIMEOUT)
        code = status.HTTP_200_OK if run.is_finished else status.HTTP_202_ACCEPTED
        return Response(RunSerializer(run).data, status=code)


class SessionQueueView(APIView):
    """The session's turns queued or running, in the order they run: the head
    first (running once its turn has started), each with its message's `text`.
    The session's owner or staff only; anyone else reads 404."""

    @extend_schema(
        operation_id="sessions_queue_list", responses=RunSerializer(many=True)
    )
    def get(self, request: Request, pk: str) -> Response:
        session = access_session(user=request.user, session_id=pk)
        runs = cancel.session_queue(session=session)
        return Response(RunSerializer(runs, many=True).data)


class SessionQueueCancelView(APIView):
    """Cancel the session's queued turns: each ends cancelled and never runs, and
    `run_finished` (status cancelled) reaches every open page. With `"running":
    true` the running turn is stopped too. Answers the runs cancelled (none: there
    was nothing left to cancel). The session's owner or staff only; 404 else."""

    # JSON only: a form or multipart body (whose parse may find no field) is a 415.
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="sessions_queue_cancel",
        request=QueueCancelInput,
        responses={200: RunSerializer(many=True)},
    )
    def post(self, request: Request, pk: str) -> Response:
        body = validated(QueueCancelInput, request.data or {})
        session = access_session(user=request.user, session_id=pk)
        runs = cancel.cancel_queue(session=session, running=body.running)
        return Response(RunSerializer(runs, many=True).data)
