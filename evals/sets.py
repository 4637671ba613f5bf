"""Who may read and change an eval set, and the set's own changes.

A set is its owner's; members of the groups it is shared to read it (and run it,
evals' runs); only the owner and staff change it, its cases included. A set you
may not read reads as missing (404); one you may read but not change is a 403.
"""

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.db.models import Count, Q, QuerySet
from django.utils.translation import gettext as _

from evals.models import EvalSet
from project.errors import DomainError, ForbiddenError, NotFoundError


class NameTaken(DomainError):
    field = "name"
    code = "name_taken"


class UnknownGroups(DomainError):
    field = "groups"


def readable_sets(*, user) -> QuerySet[EvalSet]:
    """The sets `user` may read: her own, those shared to a group of hers; staff, all."""
    sets = EvalSet.objects.select_related("owner").prefetch_related("groups")
    sets = sets.annotate(case_count=Count("cases", distinct=True))
    if user.is_staff:
        return sets
    shared = EvalSet.groups.through.objects.filter(group__user=user).values(
        "evalset_id"
    )
    return sets.filter(Q(owner=user) | Q(pk__in=shared))


def may_edit(*, user, eval_set: EvalSet) -> bool:
    return user.is_staff or eval_set.owner_id == user.pk


def access_set(*, user, set_id: int, edit: bool = False) -> EvalSet:
    """The set if `user` may read it (and, with `edit`, change it).

    Raises:
        NotFoundError: No such set, or not one she may read.
        ForbiddenError: She may read it (a group's member) but not change it.
    """
    eval_set = readable_sets(user=user).filter(pk=set_id).first()
    if eval_set is None:
        raise NotFoundError(_("No such eval set."))
    if edit and not may_edit(user=user, eval_set=eval_set):
        raise ForbiddenError(
            _("Only the set's owner and staff change it; you may read and run it.")
        )
    return eval_set


def shareable_groups(*, user) -> QuerySet[Group]:
    """The groups `user` may share a set to: hers; staff, every group."""
    groups = Group.objects.order_by("name")
    return groups if user.is_staff else groups.filter(user=user)


def groups_for(*, user, ids: Sequence[int]) -> list[Group]:
    """The groups of `ids` `user` may share to: hers; staff, any.

    Raises:
        UnknownGroups: An id names no group she may share to.
    """
    found = list(shareable_groups(user=user).filter(pk__in=set(ids)))
    if len(found) != len(set(ids)):
        raise UnknownGroups(_("Share only to groups you are a member of."))
    return found


def create_set(
    *,
    owner,
    name: str,
    description: str = "",
    criteria: dict[str, Any] | None = None,
    groups: Sequence[Group] = (),
) -> EvalSet:
    """A new set of `owner`'s; a name she already uses is refused."""
    eval_set = EvalSet(owner=owner, name=name, description=description)
    if criteria is not None:
        eval_set.criteria = criteria
    with transaction.atomic():
        _save(eval_set)
        eval_set.groups.set(groups)
    return eval_set


def update_set(*, eval_set: EvalSet, changes: dict[str, Any]) -> EvalSet:
    """Change a set's name, description, criteria or groups (those in `changes`)."""
    with transaction.atomic():
        for field in ("name", "description", "criteria"):
            if field in changes:
                setattr(eval_set, field, changes[field])
        _save(eval_set)
        if "groups" in changes:
            eval_set.groups.set(changes["groups"])
    return eval_set


def delete_set(*, eval_set: EvalSet) -> None:
    """Delete a set, its cases and its runs."""
    eval_set.delete()


def _save(eval_set: EvalSet) -> None:
    try:
        with transaction.atomic():
            eval_set.save()
    except IntegrityError:
        raise NameTaken(
            _("You already have an eval set named %(name)s.") % {"name": eval_set.name}
        ) from None
