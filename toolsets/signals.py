"""Cache coherence for access decisions, for changes made outside the services.

Models hold no side effects, but two kinds of change never pass through
toolsets.access: group membership (edited in django.contrib.auth's admin) and rows
saved by hand (admin inlines, a shell). These receivers only keep the decision
cache right; telling sockets stays with the service functions, except for
membership, which has no service of its own.
"""

from django.contrib.auth import get_user_model
from django.db.models.signals import m2m_changed, post_delete, post_save

from toolsets import access, grants
from toolsets.models import Grant, Tool, Toolset


def _invalidate(**kwargs) -> None:
    access.invalidate()


def _invalidate_grants(**kwargs) -> None:
    access.invalidate_grants()


def _membership_changed(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    if action not in {"post_add", "post_remove", "pre_clear"}:
        return
    if not reverse:
        user_ids = [instance.pk]
    elif action == "pre_clear":
        user_ids = list(instance.user_set.values_list("pk", flat=True))
    else:
        user_ids = list(pk_set or [])
    grants.membership_changed(user_ids=user_ids)


def connect() -> None:
    """Connect the receivers (from ToolsetsConfig.ready)."""
    for model in (Tool, Toolset):
        post_save.connect(_invalidate, sender=model, dispatch_uid=f"access-{model}")
        post_delete.connect(_invalidate, sender=model, dispatch_uid=f"access-d-{model}")
    post_save.connect(_invalidate_grants, sender=Grant, dispatch_uid="access-grant")
    post_delete.connect(_invalidate_grants, sender=Grant, dispatch_uid="access-d-grant")
    m2m_changed.connect(
        _membership_changed,
        sender=get_user_model().groups.through,
        dispatch_uid="access-membership",
    )
