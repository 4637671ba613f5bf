"""Domain errors: a service refused an action, and says why in words a user reads.

The one hierarchy every service raises (DESIGN.md rule 5); services never raise or
import DRF's exceptions. Two edges translate it: agents/api/errors.py (the API's
exception handler: `status_code`, and `{"detail": ...}` or `{field: [...]}`) and the
consumers (an error frame with `code` and the message). A refusal that belongs to one
concept subclasses these beside that concept (`agents.requests.errors`); the ones here
are shared by several. Their messages are marked for translation (docs/i18n.md):
made while a request or socket speaks her language, they speak it too.
"""

from django.utils.translation import gettext as _


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
    """A closed session takes no new turns or files: 409, the session's state."""

    status_code = 409
    code = "session_closed"

    def __init__(self) -> None:
        super().__init__(
            _(
                "This session is closed: it takes no new messages or files. Start a"
                " new session with the same agent to go on."
            )
        )


class SignInLockedOut(DomainError):
    """Too many failed sign-ins for an account at an address: wait, then retry."""

    status_code = 429
    code = "locked_out"


class PasswordSignInOff(ForbiddenError):
    """Local passwords are switched off (TOOLCRIB_PASSWORD_LOGIN): only the provider
    signs people in."""

    code = "password_sign_in_off"

    def __init__(self, provider: str) -> None:
        super().__init__(
            _(
                "Passwords are switched off here: sign in with %(provider)s in the browser."
            )
            % {"provider": provider}
        )


class SignInEnded(DomainError):
    """The account's sign-in no longer holds: its provider no longer lets her in, or
    must be asked again. Every credential of hers opens nothing until she signs in."""

    status_code = 401
    code = "sign_in_ended"


class TooManyTurns(DomainError):
    """Too many turns already wait or run: in this session, or for this user."""

    status_code = 429
    code = "too_many_turns"
