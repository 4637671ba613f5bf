"""Domain errors: a service refused an action, and says why in words a user reads.

The API's exception handler turns them into 4xx answers and the consumers into
error frames, so a view or consumer never has to know each one.
"""


class DomainError(Exception):
    """A refused action. `field` names the input at fault, if one is."""

    status_code = 400
    code = "refused"
    field: str | None = None


class NotFoundError(DomainError):
    """The thing does not exist, or is not yours: both read the same."""

    status_code = 404
    code = "not_found"


class ForbiddenError(DomainError):
    """You can see the thing, but this action is not yours to take."""

    status_code = 403
    code = "forbidden"


class SessionClosed(DomainError):
    """A closed session takes no new turns or files."""

    code = "session_closed"

    def __init__(self) -> None:
        super().__init__("This session is closed.")


class SignInLockedOut(DomainError):
    """Too many failed sign-ins for an account or from an address: wait, then retry."""

    status_code = 429
    code = "locked_out"


class TooManyTurns(DomainError):
    """Too many turns already wait or run: in this session, or for this user."""

    status_code = 429
    code = "too_many_turns"
