"""A prompt of the library, as a client writes it (agents.prompts keeps them).

The body's variables are `{{name}}`: a letter, then letters, digits or `_`, up to
40 characters. Other text between braces is the body's own (a template, code).
"""

import re
from typing import Annotated

from django.utils.translation import gettext as _
from pydantic import AfterValidator, Field

from agents.inputs.rule import ClientInput, StoredText
from agents.inputs.sessions import NOT_IN_A_TITLE

COMMAND_MAX_CHARS = 64
BODY_MAX_CHARS = 20_000
VARIABLES_MAX = 20
GROUPS_MAX = 50
COMMAND = re.compile(r"[a-z0-9][a-z0-9-]*")
VARIABLE = re.compile(r"\{\{\s*([A-Za-z][A-Za-z0-9_]{0,39})\s*\}\}")


def variables_of(body: str) -> list[str]:
    """The body's variables, each once, in the order they first appear."""
    return list(dict.fromkeys(VARIABLE.findall(body)))


def _command(value: str) -> str:
    value = value.strip().removeprefix("/")
    if not COMMAND.fullmatch(value):
        raise ValueError(
            _(
                "a command is lower-case letters, digits and -, starting with a "
                "letter or digit (what you type after /)"
            )
        )
    return value


def _line(value: str) -> str:
    value = value.strip()
    if NOT_IN_A_TITLE.search(value):
        raise ValueError(_("one line of text, without control characters"))
    return value


def _title(value: str) -> str:
    value = _line(value)
    if not value:
        raise ValueError(_("a title must not be blank"))
    return value


def _body(value: str) -> str:
    if not value.strip():
        raise ValueError(_("a prompt's text must not be blank"))
    count = len(variables_of(value))
    if count > VARIABLES_MAX:
        raise ValueError(
            _("a prompt has at most %(most)s variables; this one has %(count)s")
            % {"most": VARIABLES_MAX, "count": count}
        )
    return value


class PromptInput(ClientInput):
    """A prompt: its `/command`, title, text (with `{{variables}}`), and the
    groups it is shared to (by name; [] keeps it to its owner)."""

    command: Annotated[
        StoredText,
        Field(min_length=1, max_length=COMMAND_MAX_CHARS + 1),
        AfterValidator(_command),
    ]
    title: Annotated[StoredText, Field(max_length=200), AfterValidator(_title)]
    description: Annotated[StoredText, Field(max_length=500), AfterValidator(_line)] = (
        ""
    )
    body: Annotated[
        StoredText,
        Field(min_length=1, max_length=BODY_MAX_CHARS),
        AfterValidator(_body),
    ]
    groups: Annotated[
        list[Annotated[StoredText, Field(min_length=1, max_length=150)]],
        Field(max_length=GROUPS_MAX),
    ] = []
