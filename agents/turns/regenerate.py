"""Regenerating the last answer: the session's last user message, sent again as a new
turn. Editing it is a new message with the edited text (start.start_turn). Either
way the earlier events stay in the log, and the new Run follows them.
"""

from django.utils.translation import gettext as _

from agents.models import Run, Session
from agents.turns import start
from project.errors import DomainError


class NothingToRegenerate(DomainError):
    """The session has no user message to send again."""

    code = "nothing_to_regenerate"

    def __init__(self) -> None:
        super().__init__(_("This session has no message to send again yet."))


def last_message(*, session: Session) -> str:
    """The text of the session's last user message: its latest Run with text (the
    runs that answer a request carry function responses, not text)."""
    text = (
        Run.objects.filter(session=session)
        .exclude(text="")
        .order_by("-created_at", "-id")
        .values_list("text", flat=True)
        .first()
    )
    if text is None:
        raise NothingToRegenerate()
    return text


def regenerate_turn(*, session: Session, user) -> Run:
    """Send the session's last user message again, as `user`: a new queued Run.

    Raises:
        NothingToRegenerate: The session has no user message yet.
        SessionClosed, TooManyTurns: As start.start_turn.
    """
    text = last_message(session=session)
    return start.start_turn(session=session, user=user, text=text)
