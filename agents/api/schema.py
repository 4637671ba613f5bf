"""The OpenAPI schema's error answers: every status an operation may give, with its body.

drf-spectacular documents the answers a view declares (its successes, and any error
it names). This AutoSchema adds the errors every operation shares, by one set of
rules that follow the API's one exception handler (agents/api/errors.py) and DRF:

- 400: a body (any POST, PUT, PATCH or DELETE may be refused by a service) or a query
  parameter that is not what the schema says;
- 401: no token, or a bad one, wherever a view authenticates;
- 403: a signed-in user who may not do this (staff only, not theirs to decide), or a
  cookie request without its CSRF token;
- 404: an id, name or filter that matches nothing the user may see;
- 415: a body in a media type the operation does not read;
- 429: a view with throttles. A refusal of a view's own (too many queued turns)
  is declared on the view, like its successes.

409 is declared on the operations that answer it (`POST /api/requests/{id}/answer/`:
the request was answered or expired before; `POST /api/tools/{name}/invoke/`: the call
needs a person). A blank optional query
parameter is the same as none, and no query parameter may hold a NUL
(agents/params.py): `allowEmptyValue` and a `pattern` say so. And a
field declared on a serializer reads null where its model field may be null (a
grant's `tool`, an approval's `decided_by`), as the model's own fields do.
"""

from typing import Any

from django.core.exceptions import FieldDoesNotExist
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework import serializers

UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
NO_NUL = "^[^\\x00]*$"

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Why the request was refused, in words a user reads.",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
FIELD_ERRORS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "What is wrong with the request: `detail` for the request as a"
    " whole, or each field's messages (`non_field_errors` for several fields at"
    " once; an object for a nested field).",
    "additionalProperties": {
        "anyOf": [
            {"type": "string"},
            {"type": "array", "items": {}},
            {"type": "object"},
        ]
    },
}
DESCRIPTIONS = {
    "400": "Bad input: see the field errors.",
    "401": "Not signed in: no token, or an unknown or expired one.",
    "403": "Not allowed: staff only, not yours to do, or a cookie request without"
    " its CSRF token.",
    "404": "No such thing, or not yours.",
    "415": "The body is in a media type this operation does not read.",
    "429": "Too many requests: wait, then try again.",
}


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's AutoSchema, with the error answers of every operation."""

    def get_operation(self, path, path_regex, path_prefix, method, registry):
        operation = super().get_operation(
            path, path_regex, path_prefix, method, registry
        )
        if operation is None:
            return None
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "query":
                _describe_query(parameter)
        responses = operation["responses"]
        for code in self._error_statuses(operation):
            responses.setdefault(code, {"description": DESCRIPTIONS[code]})
        for code, response in responses.items():
            if code.startswith(("4", "5")) and "content" not in response:
                response["content"] = {"application/json": {"schema": self._body(code)}}
        return operation

    def _get_serializer_field_meta(self, field, direction):
        meta = super()._get_serializer_field_meta(field, direction)
        if _reads_null(field):
            meta["nullable"] = True
        if isinstance(field, serializers.JSONField):
            # Any JSON value, null included: OpenAPI 3.1's oneOf [{}, null] would
            # match a null twice, and so refuse it.
            meta.pop("nullable", None)
        return meta

    def _error_statuses(self, operation: dict[str, Any]) -> list[str]:
        where = {parameter["in"] for parameter in operation.get("parameters", [])}
        signed_in_only = {} not in operation.get("security", [{}])
        rules = {
            "400": self.method in UNSAFE or "query" in where,
            "401": bool(self.view.get_authenticators()),
            "403": signed_in_only,
            "404": bool(where & {"path", "query"}),
            "415": "requestBody" in operation,
            "429": bool(self.view.get_throttles()),
        }
        return [code for code, applies in rules.items() if applies]

    def _body(self, code: str) -> dict[str, Any]:
        name, schema = (
            ("FieldErrors", FIELD_ERRORS_SCHEMA)
            if code == "400"
            else ("Error", ERROR_SCHEMA)
        )
        component = ResolvedComponent(
            name=name, type=ResolvedComponent.SCHEMA, object=name, schema=schema
        )
        self.registry.register_on_missing(component)
        return component.ref


def _describe_query(parameter: dict[str, Any]) -> None:
    """Blank is none, and no text holds a NUL (agents.params.QueryTextMiddleware)."""
    if not parameter.get("required"):
        parameter["allowEmptyValue"] = True
    schema = parameter.get("schema", {})
    if schema.get("type") == "string" and "enum" not in schema:
        schema.setdefault("pattern", NO_NUL)


def _reads_null(field: serializers.Field) -> bool:
    """Whether a read-only field shows a model field that may be null."""
    if not field.read_only or field.allow_null or "." in (field.source or ""):
        return False
    model = getattr(getattr(field.parent, "Meta", None), "model", None)
    if model is None:
        return False
    try:
        model_field = model._meta.get_field(field.source)
    except FieldDoesNotExist:
        return False
    # A reverse relation (a toolset's tools) is a list, never null.
    return model_field.concrete and model_field.null
