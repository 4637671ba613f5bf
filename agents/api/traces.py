"""A run's trace over REST: `GET /api/runs/{id}/trace/` (agents.observability)."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.observability.traces import Trace, run_trace
from agents.sessions import access_run


class RunTraceView(APIView):
    """A run's trace: the turn, each agent, model call, tool call, governance
    check, event stored and published, and each wait for a person, with start,
    offset from the turn's start, duration and attributes (secrets redacted),
    parents before children. The session's owner or staff only; anyone else
    reads 404. With TOOLCRIB_TRACES off, `spans` is empty and `traces` says "off".
    """

    @extend_schema(responses=Trace)
    def get(self, request: Request, pk) -> Response:
        run = access_run(user=request.user, run_id=pk)
        return Response(run_trace(run))
