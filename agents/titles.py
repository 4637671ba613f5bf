"""A session's title: the start of its first message, until a person renames it.

turns/start.py names a session when it accepts its first message, in the same
UPDATE that locks the session for the turn (no query of its own); a rename
(`rename_session`) replaces the title for good, and a session renamed before its
first message keeps its name.
"""

import re

from agents.inputs import NOT_IN_A_TITLE
from agents.models import Session

AUTO_TITLE_CHARS = 60
_SPACES = re.compile(r"\s+")


def title_from_message(text: str) -> str:
    """A title from a message: its first non-blank line, without what a title may
    not hold (agents.inputs.NOT_IN_A_TITLE: a message may hold any), spaces
    collapsed, cut at a word near AUTO_TITLE_CHARS characters with an ellipsis;
    "" if nothing is left."""
    line = next((line for line in text.splitlines() if line.strip()), "")
    line = _SPACES.sub(" ", NOT_IN_A_TITLE.sub(" ", line)).strip()
    if len(line) <= AUTO_TITLE_CHARS:
        return line
    cut = line[: AUTO_TITLE_CHARS - 1]
    word_end = cut.rfind(" ")
    if word_end > AUTO_TITLE_CHARS // 2:
        cut = cut[:word_end]
    return cut.rstrip(" ,.;:-") + "…"


def rename_session(*, session: Session, title: str) -> Session:
    """Give the session the title (already validated: agents.inputs.SessionTitle).

    The list's order (by last activity) stays: a rename is no activity.
    """
    Session.objects.filter(pk=session.pk).update(title=title)
    session.title = title
    return session
