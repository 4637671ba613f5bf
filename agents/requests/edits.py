"""An approver changes a held call's arguments before approving it.

Only an approval's arguments change, only with the approval (a rejection's
`response` is the other way to answer differently), and only before anyone
approved it: under the two-person rule, every approver approves the same
arguments, so an edit after the first approval is refused (reject instead, and
say why). Arguments that look like secrets (agents.redaction) cannot be changed:
the request shows them redacted, and the call would run with what the redaction
left. The tool's schema and the grant's condition are governance's to judge:
the checks arrive by name from TOOLCRIB_APPROVAL_ARGUMENT_CHECKS (the runtime
never imports governance), and each raises ArgumentsRefused naming the field.
"""

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

from agents.models import Request, RequestApproval
from agents.redaction import redact_secrets
from agents.requests.errors import ArgumentsRefused

Check = Callable[..., None]


def edited(locked: Request, *, arguments: Mapping[str, Any] | None) -> dict | None:
    """The arguments an approver changed the locked request's call to; None when
    she gave none, or the ones asked.

    Raises:
        ArgumentsRefused: not an approval, approved by someone before, a secret
            argument, or outside what a check of the tool allows.
    """
    if arguments is None:
        return None
    arguments = dict(arguments)
    if arguments == locked.args:
        return None
    if locked.kind != Request.Kind.APPROVAL:
        raise ArgumentsRefused(None, "Only a held call's arguments can be changed.")
    if RequestApproval.objects.filter(request=locked).exists():
        raise ArgumentsRefused(
            None,
            "Someone approved these arguments already: every approver approves the "
            "same call. Approve it as it is, or reject it and say why.",
        )
    _no_secrets(arguments)
    for check in _checks(tuple(settings.TOOLCRIB_APPROVAL_ARGUMENT_CHECKS)):
        check(request=locked, arguments=arguments)
    return arguments


def _no_secrets(arguments: Mapping[str, Any]) -> None:
    shown = redact_secrets(dict(arguments))
    for name, value in arguments.items():
        if shown.get(name) != value:
            raise ArgumentsRefused(
                name,
                "it holds a secret, which cannot be changed here: approve the call "
                "as asked, or reject it.",
            )


@cache
def _checks(paths: tuple[str, ...]) -> list[Check]:
    return [import_string(path) for path in paths]
