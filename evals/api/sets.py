"""`/api/evalsets/`: eval sets and their cases, made from sessions, imported from
and exported to ADK's files (docs/evals.md). Every body is validated (a 400 with
field errors) before any set, case or session is looked up."""

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from agents.client_input import ID_CONVERTER, validated
from evals import adk_format, cases, sets
from evals.api.serializers import (
    EvalCaseSerializer,
    EvalSetSerializer,
    GroupRefSerializer,
)
from evals.from_session import add_case_from_session
from evals.inputs import (
    CaseChange,
    CaseInput,
    FromSessionInput,
    ImportInput,
    SetChange,
    SetInput,
)
from evals.models import EvalCase, EvalSet

FILE_RESPONSE = OpenApiResponse(
    response=OpenApiTypes.OBJECT, description="The file, as an attachment."
)


def _set_data(request: Request, eval_set: EvalSet) -> dict:
    fresh = sets.readable_sets(user=request.user).get(pk=eval_set.pk)
    return EvalSetSerializer(fresh, context={"request": request}).data


def _attachment(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class EvalSetViewSet(viewsets.GenericViewSet):
    """Eval sets: yours, and those shared to a group of yours (read and run)."""

    serializer_class = EvalSetSerializer
    lookup_value_converter = ID_CONVERTER
    queryset = EvalSet.objects.none()  # for the schema; get_queryset() scopes

    def get_queryset(self):
        return sets.readable_sets(user=self.request.user)

    def list(self, request: Request) -> Response:
        """The sets you may read, recently changed first."""
        page = self.get_queryset()
        return Response(
            EvalSetSerializer(page, many=True, context={"request": request}).data
        )

    @extend_schema(request=SetInput, responses={201: EvalSetSerializer})
    def create(self, request: Request) -> Response:
        """A new set of yours, shared to groups of yours if you name them."""
        body = validated(SetInput, request.data)
        eval_set = sets.create_set(
            owner=request.user,
            name=body.name,
            description=body.description,
            criteria=body.criteria,
            groups=sets.groups_for(user=request.user, ids=body.groups),
        )
        return Response(_set_data(request, eval_set), status=status.HTTP_201_CREATED)

    def retrieve(self, request: Request, pk: int) -> Response:
        """One set."""
        eval_set = sets.access_set(user=request.user, set_id=pk)
        return Response(EvalSetSerializer(eval_set, context={"request": request}).data)

    @extend_schema(request=SetChange, responses={200: EvalSetSerializer})
    def partial_update(self, request: Request, pk: int) -> Response:
        """Change a set (its owner, staff)."""
        body = validated(SetChange, request.data)
        changes = body.model_dump(exclude_unset=True, exclude_none=True)
        if "groups" in changes:
            changes["groups"] = sets.groups_for(user=request.user, ids=body.groups)
        eval_set = sets.access_set(user=request.user, set_id=pk, edit=True)
        sets.update_set(eval_set=eval_set, changes=changes)
        return Response(_set_data(request, eval_set))

    @extend_schema(responses={204: None})
    def destroy(self, request: Request, pk: int) -> Response:
        """Delete a set with its cases and runs (its owner, staff)."""
        eval_set = sets.access_set(user=request.user, set_id=pk, edit=True)
        sets.delete_set(eval_set=eval_set)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        responses={200: GroupRefSerializer(many=True)},
        operation_id="evalsets_groups",
    )
    @action(detail=False, methods=["get"])
    def groups(self, request: Request) -> Response:
        """The groups you may share a set to: yours (staff: every group)."""
        groups = sets.shareable_groups(user=request.user)
        return Response(GroupRefSerializer(groups, many=True).data)

    @extend_schema(
        request=ImportInput,
        responses={201: EvalSetSerializer},
        operation_id="evalsets_import",
    )
    @action(detail=False, methods=["post"], url_path="import")
    def import_file(self, request: Request) -> Response:
        """A new set from an ADK `.evalset.json` (and its `test_config.json`);
        a file with any error stores nothing, each error naming its case."""
        body = validated(ImportInput, request.data)
        try:
            eval_set = adk_format.import_eval_set(
                owner=request.user,
                evalset=body.evalset,
                test_config=body.test_config,
                name=body.name or "",
            )
        except adk_format.BadEvalSetFile as exc:
            raise ValidationError(exc.problems) from None
        return Response(_set_data(request, eval_set), status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: FILE_RESPONSE}, operation_id="evalsets_export")
    @action(detail=True, methods=["get"])
    def export(self, request: Request, pk: int) -> HttpResponse:
        """The set as ADK's `.evalset.json` (`adk eval` reads it)."""
        eval_set = sets.access_set(user=request.user, set_id=pk)
        filename = adk_format.eval_set_id_of(eval_set) + adk_format.EVALSET_SUFFIX
        return _attachment(adk_format.evalset_json(eval_set), filename)

    @extend_schema(
        responses={200: FILE_RESPONSE}, operation_id="evalsets_export_test_config"
    )
    @action(detail=True, methods=["get"], url_path="export/test-config")
    def export_test_config(self, request: Request, pk: int) -> HttpResponse:
        """The set's criteria as ADK's `test_config.json`."""
        eval_set = sets.access_set(user=request.user, set_id=pk)
        return _attachment(adk_format.test_config_json(eval_set), "test_config.json")


class EvalCaseViewSet(viewsets.GenericViewSet):
    """A set's cases: read by whoever reads the set, changed by its owner and staff."""

    serializer_class = EvalCaseSerializer
    lookup_value_converter = ID_CONVERTER
    queryset = EvalCase.objects.none()  # for the schema; the set scopes

    def list(self, request: Request, set_id: int) -> Response:
        """The set's cases, in order."""
        eval_set = sets.access_set(user=request.user, set_id=set_id)
        return Response(EvalCaseSerializer(eval_set.cases.all(), many=True).data)

    @extend_schema(request=CaseInput, responses={201: EvalCaseSerializer})
    def create(self, request: Request, set_id: int) -> Response:
        """A case written by hand, at the end of the set."""
        body = validated(CaseInput, request.data)
        eval_set = sets.access_set(user=request.user, set_id=set_id, edit=True)
        case = cases.add_case(
            eval_set=eval_set,
            eval_id=body.eval_id or "",
            conversation=body.conversation,
            session_input=body.session_input,
            expectations=body.expectations,
            created_by=request.user,
        )
        return Response(EvalCaseSerializer(case).data, status=status.HTTP_201_CREATED)

    def retrieve(self, request: Request, set_id: int, pk: int) -> Response:
        """One case."""
        eval_set = sets.access_set(user=request.user, set_id=set_id)
        return Response(
            EvalCaseSerializer(cases.get_case(eval_set=eval_set, case_id=pk)).data
        )

    @extend_schema(request=CaseChange, responses={200: EvalCaseSerializer})
    def partial_update(self, request: Request, set_id: int, pk: int) -> Response:
        """Change a case."""
        body = validated(CaseChange, request.data)
        eval_set = sets.access_set(user=request.user, set_id=set_id, edit=True)
        case = cases.get_case(eval_set=eval_set, case_id=pk)
        changes = body.model_dump(exclude_unset=True, exclude_none=True)
        return Response(
            EvalCaseSerializer(cases.update_case(case=case, changes=changes)).data
        )

    @extend_schema(responses={204: None})
    def destroy(self, request: Request, set_id: int, pk: int) -> Response:
        """Delete a case."""
        eval_set = sets.access_set(user=request.user, set_id=set_id, edit=True)
        cases.delete_case(case=cases.get_case(eval_set=eval_set, case_id=pk))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        request=FromSessionInput,
        responses={201: EvalCaseSerializer},
        operation_id="evalsets_cases_from_session",
    )
    @action(detail=False, methods=["post"], url_path="from-session")
    def from_session(self, request: Request, set_id: int) -> Response:
        """A case made from a session you may read: one turn (`run`), the turns of
        a seq range, or the whole session."""
        body = validated(FromSessionInput, request.data)
        eval_set = sets.access_set(user=request.user, set_id=set_id, edit=True)
        seq_range = (body.from_seq, body.to_seq) if body.from_seq else None
        case = add_case_from_session(
            user=request.user,
            eval_set=eval_set,
            session_id=body.session,
            run_id=body.run,
            seq_range=seq_range,
            eval_id=body.eval_id or "",
        )
        return Response(EvalCaseSerializer(case).data, status=status.HTTP_201_CREATED)
