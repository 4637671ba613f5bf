"""The refusals of agents.requests: one set for every kind of request.

Each names the kind in words a user reads, and keeps the field and code its kind
answered with before the kinds were one mechanism (the clients read them).
"""

from django.utils.translation import gettext as _

from project.errors import DomainError, ForbiddenError, NotFoundError


class RequestNotFound(NotFoundError):
    """No such request of this kind, or not one the user may see."""

    def __init__(self, noun: str) -> None:
        super().__init__(_("No such %(noun)s.") % {"noun": noun})


class UnknownCall(DomainError):
    """The session the user sees has no long-running call with this id."""

    field = "call_id"
    code = "unknown_call"

    def __init__(self) -> None:
        super().__init__(_("No long-running call with this id in this session."))


class AnswerDoesNotFit(DomainError):
    """A workflow's question (`RequestInput(response_schema=...)`) takes answers of
    its schema only: ADK would fail the resumed turn, and every later answer."""

    field = "response"
    code = "invalid_answer"

    def __init__(self, problem: str) -> None:
        super().__init__(
            _("The answer does not fit the question's schema: %(problem)s")
            % {"problem": problem}
        )


class AlreadyAnswered(DomainError):
    """The request is answered (or decided, or expired): it is answered once."""

    def __init__(self, *, field: str, code: str, message: str) -> None:
        self.field = field
        self.code = code
        super().__init__(message)


class NotYours(ForbiddenError):
    """The user sees the request, but someone else answers it."""

    def __init__(self, *, verb: str, noun: str, group: str) -> None:
        super().__init__(
            _(
                "Only members of %(group)r may %(verb)s this %(noun)s, and not its requester."
            )
            % {"group": group, "verb": verb, "noun": noun}
        )


class RequestClosed(DomainError):
    """The request was answered, decided or expired before: there is nothing left to
    answer (the inbox's answer path, agents.answers.answer.answer_by_id)."""

    status_code = 409

    def __init__(self, *, code: str, message: str) -> None:
        self.code = code
        super().__init__(message)


class CannotRemember(DomainError):
    """Only the requester may always allow a tool for her session, and only where
    the catalog lets her decide its calls herself: bad input, named by its field."""

    field = "remember"
    code = "cannot_remember"

    def __init__(self) -> None:
        super().__init__(
            _(
                "Only the requester may always allow this tool for her session, and only"
                " where the catalog lets her approve its calls herself."
            )
        )


class RequesterMayNotApprove(ForbiddenError):
    """A request that needs several approvers is never approved by its requester."""

    def __init__(self, approvals: int) -> None:
        super().__init__(
            _(
                "This call needs %(approvals)s approvals by different people, and its requester is never one of them."
            )
            % {"approvals": approvals}
        )


class ApprovedAlready(DomainError):
    """The same person approves a request once: another person must approve it."""

    field = "approved"
    code = "already_approved_by_you"

    def __init__(self) -> None:
        super().__init__(
            _("You approved this call already: it needs another person's approval.")
        )


class ArgumentsRefused(DomainError):
    """An approver's arguments are outside the tool's schema or its grant's
    condition, or cannot be changed here: bad input in the field `arguments`, its
    message led by the argument's name (as pydantic's field errors read)."""

    field = "arguments"
    code = "invalid_arguments"

    def __init__(self, argument: str | None, message: str) -> None:
        self.argument = argument
        super().__init__(f"{argument}: {message}" if argument else message)
