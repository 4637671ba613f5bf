"""Eval runs over HTTP (docs/eval-runs.md):

- `POST /api/evalsets/{id}/runs/` starts a run; `GET` there is the set's history;
- `GET /api/evalset-runs/{id}/` is a run with its result per case;
- `POST /api/evalset-runs/{id}/cancel/` stops it.

A set, or a run of it, that the caller may not read is a 404.
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.client_input import validated, whole_number_param
from evals.api.run_serializers import (
    EvalRunDetailSerializer,
    EvalRunSerializer,
    RunInput,
)
from evals.running import runs

HISTORY_DEFAULT, HISTORY_MAX = 50, 200


class EvalSetRunsView(APIView):
    """A set's runs: start one, read its history."""

    serializer_class = EvalRunSerializer

    @extend_schema(
        operation_id="evalset_runs_list",
        parameters=[OpenApiParameter("limit", int, description="At most 200.")],
        responses={200: EvalRunSerializer(many=True)},
    )
    def get(self, request: Request, set_id: int) -> Response:
        """The set's runs, newest first."""
        limit = whole_number_param(
            request.query_params, "limit", default=HISTORY_DEFAULT, maximum=HISTORY_MAX
        )
        eval_set = runs.get_set(user=request.user, set_id=set_id)
        found = eval_set.runs.select_related("as_user", "started_by")[:limit]
        return Response(EvalRunSerializer(found, many=True).data)

    @extend_schema(
        operation_id="evalset_runs_create",
        request=RunInput,
        responses={201: EvalRunSerializer},
    )
    def post(self, request: Request, set_id: int) -> Response:
        """Run the set: against an agent (a version of it) and a model, as yourself
        (staff: as any user); tools answer from the recorded results unless
        `live_tools` lets read-only ones run."""
        body = validated(RunInput, request.data)
        eval_set = runs.get_set(user=request.user, set_id=set_id)
        try:
            run = runs.start_run(
                eval_set=eval_set,
                user=request.user,
                agent=body.agent,
                agent_version=body.agent_version,
                model=body.model,
                as_user=body.as_user,
                live_tools=body.live_tools,
                threshold=body.threshold,
            )
        except runs.RunInputError as exc:
            raise serializers.ValidationError(exc.errors) from None
        return Response(EvalRunSerializer(run).data, status=status.HTTP_201_CREATED)


class EvalRunView(APIView):
    """One run, with its result per case."""

    serializer_class = EvalRunDetailSerializer

    @extend_schema(operation_id="evalset_run_detail")
    def get(self, request: Request, pk: int) -> Response:
        """The run and each case's result: scores, what the agent did, measures."""
        run = runs.get_run(user=request.user, run_id=pk)
        return Response(EvalRunDetailSerializer(run).data)


class EvalRunCancelView(APIView):
    """Stop a queued or running run."""

    serializer_class = EvalRunSerializer

    @extend_schema(
        operation_id="evalset_run_cancel",
        request=None,
        responses={200: EvalRunSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        """Cancel the run: its running turn stops, the cases not reached stay pending.
        A run that has ended is a 409."""
        run = runs.get_run(user=request.user, run_id=pk)
        return Response(EvalRunSerializer(runs.cancel_run(run=run)).data)
