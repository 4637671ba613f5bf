"""The refusals of a notice's approve / reject link, in words its approver reads."""

from django.utils.translation import gettext as _

from project.errors import DomainError, ForbiddenError, NotFoundError


class LinkNotFound(NotFoundError):
    """No link Toolcrib sent has this token: mistyped, cut, or made up."""

    code = "link_not_found"

    def __init__(self) -> None:
        super().__init__(
            _(
                "This link is not one Toolcrib sent: it may be cut or mistyped."
                " Open your inbox instead."
            )
        )


class LinkUsed(DomainError):
    """The link (or its twin) decided the request already: a link works once."""

    status_code = 409
    code = "link_used"

    def __init__(self) -> None:
        super().__init__(_("This link was used already: a link decides once."))


class LinkExpired(DomainError):
    """The link's time is up: its request's, or the longest a link lives."""

    status_code = 410
    code = "link_expired"

    def __init__(self) -> None:
        super().__init__(_("This link has expired. Open your inbox instead."))


class RequestEnded(DomainError):
    """The request was decided or expired before the link was used."""

    status_code = 409
    code = "request_ended"

    def __init__(self, status: str) -> None:
        super().__init__(
            _("Nothing is left to decide: this request is %(status)s.")
            % {"status": status}
        )


class LinkForSomeoneElse(ForbiddenError):
    """Signed in as another person than the one the link was sent to."""

    code = "link_for_someone_else"

    def __init__(self) -> None:
        super().__init__(
            _(
                "This link was sent to another person: sign in as her, or open"
                " your own inbox."
            )
        )


class NoLongerAllowed(ForbiddenError):
    """The link's person may no longer decide the request (left its group, say)."""

    code = "no_longer_allowed"

    def __init__(self) -> None:
        super().__init__(_("You may no longer decide this request."))


class BadComment(DomainError):
    """The comment is too long, or holds characters no comment may."""

    field = "comment"
    code = "bad_comment"

    def __init__(self) -> None:
        super().__init__(
            _(
                "The comment is too long (2000 characters at most) or holds characters"
                " a comment may not. Go back and shorten it."
            )
        )
