"""The OpenAPI schema, fuzzed: no 5xx, and no status, media type or body it does not say.

Schemathesis makes requests for every operation of the schema /api/schema/ serves
(ones it allows and ones it refuses) and sends them to the Django app in this
process (WSGI), with a token, as a user and as staff. Half the cases that name a
session, a run, an agent, a toolset, a tool, a budget, a grant or an artifact are
pointed at rows that exist, so they reach past the 404. Inside the test's
transaction no turn starts: a message queues a Run, and no model is asked.
"""

import zlib
from collections.abc import Iterator

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from agents.artifacts import upload_artifact
from agents.models import Budget, Run
from agents.sessions import create_session
from agents.tokens import issue_token
from toolsets import grants
from toolsets.catalog import sync_catalog
from toolsets.models import Tool

# Per operation and role: 65 operations x 2 roles x 25 cases stay near 2 minutes.
EXAMPLES = 25


def parameters_refused(ctx, response, case) -> bool | None:
    """negative_data_rejection, for a request whose body is valid: a path or query
    parameter the schema refuses must be refused (400, or 404 for a path).

    Body fields keep the leniency of DRF's fields ("0" reads as false, as a form
    sends it), which the check would call accepting invalid data.
    """
    if case.meta is not None and case.meta.is_negative_at(ParameterLocation.BODY):
        return None
    return negative_data_rejection(ctx, response, case)


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    parameters_refused,
]
APP = get_wsgi_application()
# The schema /api/schema/ serves, generated here: the tests are made from it.
RAW = SchemaGenerator().get_schema(request=None, public=True)
schema = schemathesis.openapi.from_dict(RAW)
# Path parameters of rows that exist, by path prefix: set by the `rows` fixture.
REAL: dict[str, dict[str, str]] = {}


@schemathesis.hook  # global: this module holds the suite's only schemathesis tests
def before_call(context, case, kwargs) -> None:
    """Point half the cases with valid path parameters at existing rows."""
    params = case.path_parameters or {}
    if not params or zlib.crc32(repr(sorted(params.items())).encode()) % 2:
        return
    if case.meta is not None and case.meta.is_negative_at(ParameterLocation.PATH):
        return  # an id the schema refuses stays one
    for prefix, values in REAL.items():
        if case.path.startswith(prefix):
            params.update(values)


@pytest.fixture(autouse=True)
def _keep_connection() -> Iterator[None]:
    """Keep the test's transaction open across requests, as Django's test client does.

    A WSGI request ends by closing the database connection, and with it the test's
    transaction.
    """
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def owner(make_user):
    return make_user("owner")


@pytest.fixture
def rows(db, demo_agents, owner, settings) -> Iterator[None]:
    """The owner's session (with a run and a file), budget and grant, by path."""
    settings.TOOLCRIB_WAIT_TIMEOUT = 0.01  # no turn runs here: never wait for one
    sync_catalog()
    session = create_session(user=owner, agent=demo_agents["calculator"])
    run = Run.objects.create(session=session, user=owner, text="hi")
    upload_artifact(
        session=session, filename="notes.txt", content=b"hi", mime_type="text/plain"
    )
    tool = Tool.objects.select_related("toolset").filter(toolset__name="math").first()
    grant, _ = grants.grant_tool(target=tool.toolset, effect="allow", user=owner)
    REAL.update(
        {
            "/api/sessions/{id}/toolsets/{name}/": {"id": session.id, "name": "math"},
            "/api/sessions/{id}/artifacts/{filename}/": {
                "id": session.id,
                "filename": "notes.txt",
            },
            "/api/sessions/{id}/": {"id": session.id},
            "/api/runs/{id}/": {"id": str(run.id)},
            "/api/agents/{name}/": {"name": "calculator"},
            "/api/toolsets/{name}/": {"name": "math"},
            "/api/tools/{full_name}/": {"full_name": tool.full_name},
            "/api/budgets/{id}/": {
                "id": Budget.objects.create(user=owner, daily_tokens=1000).pk
            },
            "/api/grants/{id}/": {"id": grant.pk},
        }
    )
    yield
    REAL.clear()


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,  # no .hypothesis/ folder in the work tree
)


def call_and_validate(case, token: str) -> None:
    headers = {"Authorization": f"Token {token}"}
    case.call_and_validate(app=APP, headers=headers, checks=CHECKS)


@pytest.fixture
def owner_token(owner) -> str:
    return issue_token(user=owner)


@pytest.fixture
def staff_token(make_user) -> str:
    return issue_token(user=make_user("boss", is_staff=True))


@schema.parametrize()
@FUZZ
def test_every_operation_answers_a_user_as_documented(case, rows, owner_token):
    call_and_validate(case, owner_token)


# Registering an import starts the program, or fetches the URL, that it names:
# staff fuzzing it would run random programs. A user is refused it (403) above.
@schema.exclude(method="POST", path="/api/imports/").parametrize()
@FUZZ
def test_every_operation_answers_staff_as_documented(case, rows, staff_token):
    call_and_validate(case, staff_token)


def operations() -> Iterator[tuple[str, str, dict]]:
    for path, item in RAW["paths"].items():
        for method, operation in item.items():
            yield method.upper(), path, operation


def test_every_operation_documents_its_errors_with_a_json_body():
    for method, path, operation in operations():
        errors = {
            code: response
            for code, response in operation["responses"].items()
            if code.startswith("4")
        }
        assert errors, (method, path)
        for code, response in errors.items():
            assert "application/json" in response["content"], (method, path, code)
        if "security" in operation and {} not in operation["security"]:
            assert {"401", "403"} <= set(errors), (method, path)
        if "{" in path:
            assert "404" in errors, (method, path)


def test_path_ids_are_typed_as_their_converters_take_them():
    ids = {
        path: parameter["schema"]
        for _, path, operation in operations()
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "path" and parameter["name"] == "id"
    }

    row_id = {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}
    runs = {path for path in ids if path.startswith("/api/runs/")}
    assert runs == {
        "/api/runs/{id}/",
        "/api/runs/{id}/cancel/",
        "/api/runs/{id}/trace/",
    }
    assert all(ids.pop(path) == {"type": "string", "format": "uuid"} for path in runs)
    sessions = {path for path in ids if path.startswith("/api/sessions/")}
    assert {ids.pop(path)["pattern"] for path in sessions} == {"^[^/\\x00]+$"}
    assert ids and all(typed == row_id for typed in ids.values()), ids


def test_a_message_documents_the_queued_turn_cap():
    messages = RAW["paths"]["/api/sessions/{id}/messages/"]["post"]

    assert "429" in messages["responses"]


def test_the_schema_is_valid_openapi():
    validate_schema(RAW)  # raises on a schema no OpenAPI 3.1 tool would read
