"""The prompt library: a person's prompts and those shared to her groups.

Who may do what:
- use (list, read) a prompt: its owner, a member of a group it is shared to, staff;
- change or delete it: its owner and staff (a member who may use it gets a
  ForbiddenError saying so; anyone else, a NotFoundError: it does not exist for her);
- share it: to her own groups (staff: to any group).
"""

from dataclasses import dataclass

from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from agents.inputs import PromptInput
from agents.models import Prompt
from project.errors import DomainError, ForbiddenError, NotFoundError

LIST_MAX = 500


class PromptRefused(DomainError):
    """A prompt's input is sound but cannot be kept: a field says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def usable_by(user) -> QuerySet[Prompt]:
    """The prompts she may use: hers, then those shared to her groups."""
    mine = Q(owner=user) | Q(groups__in=user.groups.all())
    return (
        Prompt.objects.filter(mine)
        .distinct()
        .select_related("owner")
        .prefetch_related("groups")
        .order_by("command", "id")
    )


def visible_to(user) -> QuerySet[Prompt]:
    """The prompts she may read by id: staff, every one."""
    if user.is_staff:
        return Prompt.objects.select_related("owner").prefetch_related("groups")
    return usable_by(user)


def get_prompt(user, prompt_id: int) -> Prompt:
    try:
        return visible_to(user).get(pk=prompt_id)
    except Prompt.DoesNotExist:
        raise NotFoundError(_("No such prompt.")) from None


def matching(prompts: QuerySet[Prompt], text: str) -> QuerySet[Prompt]:
    return prompts.filter(Q(command__icontains=text) | Q(title__icontains=text))


def may_change(user, prompt: Prompt) -> bool:
    return user.is_staff or prompt.owner_id == user.pk


def shareable_groups(user) -> QuerySet[Group]:
    """The groups she may share a prompt to: hers (staff: every group)."""
    groups = Group.objects.all() if user.is_staff else user.groups.all()
    return groups.order_by("name")


@dataclass(frozen=True)
class Saved:
    prompt: Prompt
    created: bool


def save_prompt(user, values: PromptInput, prompt: Prompt | None = None) -> Saved:
    """Create her prompt, or change one she may change, from validated input."""
    if prompt is not None and not may_change(user, prompt):
        raise ForbiddenError(_("Only the prompt's owner or staff may change it."))
    groups = _groups(user, values.groups)
    owner_id = prompt.owner_id if prompt is not None else user.pk
    clash = Prompt.objects.filter(owner_id=owner_id, command=values.command)
    if prompt is not None:
        clash = clash.exclude(pk=prompt.pk)
    if clash.exists():
        raise PromptRefused(
            "command",
            _("You already have a prompt /%(command)s.") % {"command": values.command},
        )
    created = prompt is None
    if prompt is None:
        prompt = Prompt(owner=user)
    prompt.command = values.command
    prompt.title = values.title
    prompt.description = values.description
    prompt.body = values.body
    try:
        with transaction.atomic():
            prompt.save()
            prompt.groups.set(groups)
    except IntegrityError:
        # Another request took the command between the check and the save.
        raise PromptRefused(
            "command",
            _("You already have a prompt /%(command)s.") % {"command": values.command},
        ) from None
    return Saved(prompt=prompt, created=created)


def delete_prompt(user, prompt: Prompt) -> None:
    if not may_change(user, prompt):
        raise ForbiddenError(_("Only the prompt's owner or staff may delete it."))
    prompt.delete()


def _groups(user, names: list[str]) -> list[Group]:
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return []
    found = {
        group.name: group for group in shareable_groups(user).filter(name__in=wanted)
    }
    missing = [name for name in wanted if name not in found]
    if missing:
        raise PromptRefused(
            "groups",
            (
                _(
                    "You may share a prompt only to your own groups: %(groups)s is not one."
                )
                if len(missing) == 1
                else _(
                    "You may share a prompt only to your own groups: %(groups)s are not."
                )
            )
            % {"groups": ", ".join(missing)},
        )
    return [found[name] for name in wanted]
