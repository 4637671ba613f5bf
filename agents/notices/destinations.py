"""Staff's webhook destinations: made, changed and removed, the URL and the
secret sealed."""

from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.utils.translation import gettext as _

from agents.models import WebhookDestination
from agents.notices.inputs import DestinationInput
from agents.notices.sending import SECRET_PURPOSE, URL_PURPOSE
from project.errors import DomainError
from project.sealing import seal


class UnknownUser(DomainError):
    field = "user"
    code = "unknown_user"

    def __init__(self) -> None:
        super().__init__(_("No such user."))


class NameTaken(DomainError):
    field = "name"
    code = "name_taken"

    def __init__(self) -> None:
        super().__init__(_("Another destination has this name."))


def save_destination(
    *, values: DestinationInput, destination: WebhookDestination | None = None
) -> WebhookDestination:
    """Make a destination, or change `destination` to `values` (its secret kept
    if `values` gives none, dropped if its format is no longer generic)."""
    destination = destination or WebhookDestination()
    _check(values, destination)
    destination.name = values.name
    destination.sealed_url = seal(URL_PURPOSE, values.url)
    destination.host = urlsplit(values.url).hostname or ""
    destination.format = values.format
    destination.kinds = list(values.kinds)
    destination.user_id = values.user
    destination.group = values.group
    destination.enabled = values.enabled
    if values.secret:
        destination.sealed_secret = seal(SECRET_PURPOSE, values.secret)
    if values.format != WebhookDestination.Format.GENERIC:
        destination.sealed_secret = ""
    destination.save()
    return destination


def _check(values: DestinationInput, destination: WebhookDestination) -> None:
    users = get_user_model().objects
    if values.user is not None and not users.filter(pk=values.user).exists():
        raise UnknownUser()
    taken = WebhookDestination.objects.filter(name=values.name)
    if taken.exclude(pk=destination.pk).exists():
        raise NameTaken()
