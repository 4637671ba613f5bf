"""Groups of users, the subjects of grants: staff create, rename, fill and delete them,
and the sign-in provider keeps the groups it manages in step with its group claim.

A group's name may not look like another's (`confusable_with`: the same letters
in another script, width or case, `mаnagers` with a Cyrillic а beside `managers`):
grants and approvals name groups, and a person choosing one must not pick the
impostor.

Every change that moves a user in or out of a group rings her sockets ("tools
changed") once committed: membership through toolsets.signals, which also sees
the admin's edits; a deleted group through grants.membership_changed, since
Django deletes its memberships without a signal.
"""

import logging
import unicodedata
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import IntegrityError, transaction
from django.db.models import Count, QuerySet
from django.utils.translation import gettext

from agents import changes
from agents.models import Request
from project.errors import DomainError, NotFoundError
from toolsets import access, grants
from toolsets.confusables import look_alike

logger = logging.getLogger(__name__)

NAME_MAX = Group._meta.get_field("name").max_length


class GroupNameTaken(DomainError):
    """Another group has this name (letter case aside)."""

    code = "name_taken"
    field = "name"

    def __init__(self, name: str) -> None:
        super().__init__(
            gettext("A group named %(name)r exists already.") % {"name": name}
        )


class GroupNameConfusable(DomainError):
    """The name looks like another group's: the same letters in another script,
    width or case."""

    code = "name_confusable"
    field = "name"

    def __init__(self, name: str, existing: str) -> None:
        unlike = _described(char for char in name if char not in existing)
        super().__init__(
            gettext(
                "%(name)r looks like the group %(existing)r, which exists already%(f_unlike_if_unlike_else)s: choose a name that reads differently."
            )
            % {
                "name": name,
                "existing": existing,
                "f_unlike_if_unlike_else": f" ({unlike})" if unlike else "",
            }
        )


class NoSuchUser(DomainError):
    """A username that names nobody, given in a body."""

    code = "no_such_user"
    field = "username"

    def __init__(self, username: str) -> None:
        super().__init__(
            gettext("No user is named %(username)r.") % {"username": username}
        )


class NotAMember(NotFoundError):
    def __init__(self, *, username: str, group: str) -> None:
        super().__init__(
            gettext("%(username)s is not a member of %(group)s.")
            % {"username": username, "group": group}
        )


def groups_with_counts() -> QuerySet[Group]:
    """Every group by name, each with `member_count`."""
    return Group.objects.annotate(member_count=Count("user", distinct=True)).order_by(
        "name"
    )


def members(group: Group) -> QuerySet:
    """A group's members, by username."""
    return group.user_set.order_by("username")


def user_by_username(username: str) -> AbstractBaseUser:
    """The user of this username, or NoSuchUser."""
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NoSuchUser(username)
    return user


def plain_group_name(name: str) -> str:
    """A group name in Unicode's NFKC form, its spaces collapsed and stripped."""
    return " ".join(unicodedata.normalize("NFKC", name).split())


def group_key(name: str) -> str:
    """What two group names that read alike share: plain_group_name, letter case
    folded (`Managers`, ` managers ` and a full-width `ｍanagers` share one)."""
    return plain_group_name(name).casefold()


def is_provider_managed(name: str) -> bool:
    """Whether the sign-in provider sets this group's members (TOOLCRIB_OIDC_*):
    its name matches a pattern of TOOLCRIB_OIDC_MANAGED_GROUPS, both by group_key."""
    if not settings.TOOLCRIB_OIDC_ISSUER:
        return False
    key = group_key(name)
    return any(
        fnmatchcase(key, group_key(pattern))
        for pattern in settings.TOOLCRIB_OIDC_MANAGED_GROUPS
    )


def create_group(*, name: str) -> Group:
    """A new group with no members."""
    try:
        with transaction.atomic():
            _refuse_taken(name)
            return Group.objects.create(name=name)
    except IntegrityError:  # the same name created at the same moment
        raise GroupNameTaken(name) from None


def rename_group(*, group: Group, name: str) -> Group:
    """Rename a group; its grants, budgets and approvals follow it.

    Requests still waiting for an answer from the group name it (agents keeps the
    name, not the row), so they take the new name too.
    """
    old = group.name
    if name == old:
        return group
    try:
        with transaction.atomic():
            _refuse_taken(name, other_than=group)
            group.name = name
            group.save(update_fields=["name"])
            Request.objects.filter(
                answer_group=old, status=Request.Status.PENDING
            ).update(answer_group=name)
            access.invalidate()  # the catalog names approver groups
    except IntegrityError:
        raise GroupNameTaken(name) from None
    return group


def delete_group(*, group: Group) -> None:
    """Delete a group and its grants; its members' tools follow the other rules."""
    with transaction.atomic():
        member_ids = list(group.user_set.values_list("pk", flat=True))
        group.delete()
        access.invalidate()  # tools whose approver group it was
        grants.membership_changed(user_ids=member_ids)


def add_member(*, group: Group, user: AbstractBaseUser) -> bool:
    """Put a user in a group; False if she was in it already."""
    with transaction.atomic():
        if group.user_set.filter(pk=user.pk).exists():
            return False
        group.user_set.add(user)  # toolsets.signals rings her sockets
        _audit_membership(user, "group added", {"groups": [None, group.name]})
    return True


def remove_member(*, group: Group, user: AbstractBaseUser) -> None:
    """Take a user out of a group."""
    with transaction.atomic():
        if not group.user_set.filter(pk=user.pk).exists():
            raise NotAMember(username=user.get_username(), group=group.name)
        group.user_set.remove(user)  # toolsets.signals rings her sockets
        _audit_membership(user, "group removed", {"groups": [group.name, None]})


def _audit_membership(user: AbstractBaseUser, action: str, change: dict) -> None:
    # A membership is no save of the user: the change audit records it by hand,
    # when a person made it (not a provider's sign-in).
    actor = changes.current_actor()
    if actor is not None:
        changes.record(actor, user, action, change)


def sync_provider_groups(*, user: AbstractBaseUser, names: Iterable[str]) -> None:
    """Make the user's provider-managed groups exactly the claimed ones.

    Claimed names are matched by group_key: a claim joins the existing group that
    reads like it (the oldest, should two made before this rule read alike), and
    a missing one is created under the first claimed form of its name. A claimed
    name that TOOLCRIB_OIDC_MANAGED_GROUPS does not match is ignored, and a group it
    does not match is never touched, so staff keep Toolcrib's own groups.
    """
    wanted: dict[str, str] = {}
    for name in names:
        if is_provider_managed(name):
            wanted.setdefault(group_key(name), plain_group_name(name))
    with transaction.atomic():
        chosen = _groups_for(wanted)
        current = list(user.groups.all())
        leaving = [
            group
            for group in current
            if is_provider_managed(group.name)
            and chosen.get(group_key(group.name)) != group
        ]
        joining = [group for group in chosen.values() if group not in current]
        if leaving:
            user.groups.remove(*leaving)
        if joining:
            user.groups.add(*joining)


def _groups_for(wanted: Mapping[str, str]) -> dict[str, Group]:
    """The group of each wanted key: the oldest that reads alike, or a new one."""
    if not wanted:
        return {}
    found: dict[str, Group] = {}
    # Every group's name is compared by key: groups are few, and SQL has no NFKC.
    for group in Group.objects.order_by("pk").only("pk", "name"):
        key = group_key(group.name)
        if key in wanted and key not in found:
            found[key] = group
    for key in sorted(set(wanted) - set(found)):
        existing = confusable_with(wanted[key])
        if existing is not None:
            # Another script's letters (a Cyrillic а): not the same group, and never
            # a second one that reads like it. The claim is left out.
            logger.warning(
                "provider group not made: %r looks like the group %r",
                wanted[key],
                existing,
            )
            continue
        found[key], _ = Group.objects.get_or_create(name=wanted[key])
    return found


def confusable_with(name: str, *, other_than: Group | None = None) -> str | None:
    """The name of an existing group that `name` looks like, or None.

    Looks alike: equal after NFKC, case folding and Unicode's confusables skeleton
    (TR39, toolsets/confusables.py), so `mаnagers` (Cyrillic а), `MANAGERS` and
    `ｍanagers` all name `managers`. `other_than`: a group to leave out (the one
    being renamed).
    """
    names = Group.objects.order_by("name").values_list("name", flat=True)
    if other_than is not None:
        names = names.exclude(pk=other_than.pk)
    return next((existing for existing in names if look_alike(name, existing)), None)


def _refuse_taken(name: str, *, other_than: Group | None = None) -> None:
    taken = Group.objects.filter(name__iexact=name)
    if other_than is not None:
        taken = taken.exclude(pk=other_than.pk)
    if taken.exists():
        raise GroupNameTaken(name)
    existing = confusable_with(name, other_than=other_than)
    if existing is not None:
        raise GroupNameConfusable(name, existing)


def _described(chars: Iterable[str]) -> str:
    """Up to three characters as Unicode names them: U+0430 CYRILLIC SMALL LETTER A."""
    unique = list(dict.fromkeys(chars))[:3]
    return ", ".join(
        f"U+{ord(char):04X} {unicodedata.name(char, 'an unnamed character')}"
        for char in unique
    )
