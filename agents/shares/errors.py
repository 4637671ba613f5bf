"""The refusals of a shared link, beside the domain errors of project.errors."""

from django.utils.translation import gettext as _

from project.errors import DomainError, NotFoundError


class ShareNotFound(NotFoundError):
    """No link has this token (or it was never one): 404."""

    def __init__(self) -> None:
        super().__init__(_("No such shared link."))


class ShareGone(DomainError):
    """The link was revoked or has expired: 410, what it showed is gone."""

    status_code = 410
    code = "share_gone"


class SignInRequired(DomainError):
    """The link opens only to people signed in: 401."""

    status_code = 401
    code = "sign_in_required"

    def __init__(self) -> None:
        super().__init__(_("Sign in to open this shared session."))


class AnyoneNotAllowed(DomainError):
    """An "anyone with the link" share while staff do not allow one: 400."""

    field = "anyone"
    code = "anyone_not_allowed"

    def __init__(self) -> None:
        super().__init__(
            _("Staff do not allow links that anyone can open without signing in.")
        )
