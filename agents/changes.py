"""TEMPORARY STUB of agents.changes (the toolservers branch only).

main is getting the real module (django-auditlog); this stub keeps the names
(`track`, `ActorFromRequest`, `record`) importable until then. On merge, take
main's file and drop this one.
"""

import logging
from typing import Any

logger = logging.getLogger(__name__)


def track(model: Any, exclude_fields: tuple[str, ...] = ()) -> None:
    """Log each save and delete of `model` (stub: nothing)."""


class ActorFromRequest:
    """A DRF view mixin recording the caller as the actor (stub: nothing)."""


def record(actor: Any, target: Any, action: str, detail: Any = None) -> None:
    """Log a change that is not a save (stub: a log line)."""
    logger.info("change action=%s target=%s", action, target)
