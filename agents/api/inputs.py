"""The REST edge of agents.inputs: parsers that apply its rules to every body, the
client input models as field errors, and a renderer that never fails on stored text.

The parsers are REST_FRAMEWORK's defaults; a view that narrows its parsers picks
among these, never DRF's own, so no body reaches a view unchecked.
"""

from typing import Any, TypeVar

import pydantic
from django.http import QueryDict
from rest_framework import parsers, renderers
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.settings import api_settings

from agents.inputs import (
    BadJson,
    BadText,
    dotted,
    load_client_json,
    replace_surrogates,
    text_problem,
)

Input = TypeVar("Input", bound=pydantic.BaseModel)


class JSONParser(parsers.JSONParser):
    """JSON as the socket reads it: bounded depth, and the one rule for text."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        # DRF's check: a text charset only (bz2_codec would inflate the body).
        encoding = parsers.get_encoding(parser_context or {})
        try:
            return load_client_json(stream.read().decode(encoding))
        except UnicodeDecodeError:
            raise ParseError(
                f"JSON parse error - the body is not {encoding}."
            ) from None
        except BadJson as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        except BadText as exc:
            raise ValidationError(_field_error(exc.path, exc.problem)) from None


class FormParser(parsers.FormParser):
    """Form fields under the one rule for text, names and values."""

    def parse(self, stream, media_type=None, parser_context=None) -> QueryDict:
        data = super().parse(stream, media_type, parser_context)
        _check_form(data)
        return data


class MultiPartParser(parsers.MultiPartParser):
    """Multipart fields and file names under the one rule for text."""

    def parse(self, stream, media_type=None, parser_context=None):
        parsed = super().parse(stream, media_type, parser_context)
        _check_form(parsed.data)
        _check_form(parsed.files)
        return parsed


def validated(model: type[Input], data: Any) -> Input:
    """`data` as a client input model of agents.inputs, or a 400 with field errors."""
    if isinstance(data, QueryDict):
        data = data.dict()
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise ValidationError(field_errors(exc)) from None


def field_errors(exc: pydantic.ValidationError) -> dict[str, list[str]]:
    """pydantic's errors as DRF field errors, never with the values given."""
    errors: dict[str, list[str]] = {}
    for error in exc.errors(include_input=False, include_url=False):
        loc = error["loc"]
        message = str(error["msg"]).removeprefix("Value error, ")
        message = message[:1].upper() + message[1:]
        if len(loc) > 1:
            message = f"{dotted(loc[1:])}: {message}"
        key = str(loc[0]) if loc else api_settings.NON_FIELD_ERRORS_KEY
        errors.setdefault(key, []).append(message)
    return errors


class JSONRenderer(renderers.JSONRenderer):
    """DRF's JSON renderer, still answering when a stored text cannot be encoded."""

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            # Stored before the input rule: show U+FFFD rather than fail every read.
            return super().render(
                replace_surrogates(data), accepted_media_type, renderer_context
            )


def _check_form(data: QueryDict) -> None:
    for key, values in data.lists():
        for text in [key, *(text for value in values for text in _texts_of(value))]:
            problem = text_problem(text)
            if problem:
                raise ValidationError(_field_error((key,), problem))


def _texts_of(value: Any) -> list[str]:
    """A form value's texts: itself, or an upload's name and content type."""
    if isinstance(value, str):
        return [value]
    return [value.name or "", value.content_type or ""]


def _field_error(path: tuple, problem: str) -> dict[str, list[str]]:
    if not path:
        return {api_settings.NON_FIELD_ERRORS_KEY: [problem]}
    head, rest = str(path[0]), path[1:]
    # A bad field name must not come back in the answer.
    if text_problem(head):
        return {api_settings.NON_FIELD_ERRORS_KEY: [f"A field name: {problem}"]}
    return {head: [f"{dotted(rest)}: {problem}" if rest else problem]}
