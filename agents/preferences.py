"""A person's display preferences: her theme and her language (docs/i18n.md).

- `preferences_of` / `set_preferences`: her row, or the defaults (the system's
  theme, the browser's language);
- `language_for`: the language a request or a socket speaks: hers if she chose
  one, else the first of Accept-Language that settings.LANGUAGES has, else
  settings.LANGUAGE_CODE;
- `PreferenceMiddleware` (after Django's LocaleMiddleware and the authentication):
  a signed-in web session's chosen language replaces the browser's, and
  `request.preferences` holds her choices for the pages (`display`, a template
  context processor: `ui_theme`, `ui_language`).

An API token's request speaks its Accept-Language (a program's choice, not a
page's): her preference applies to her browser, its API calls and its sockets.
Text the model reads, and what the audit stores, stays English (docs/i18n.md).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation.trans_real import parse_accept_lang_header
from pydantic import field_validator

from agents.inputs import ClientInput
from agents.models import UserPreference
from agents.models.preferences import AUTOMATIC

Theme = Literal["system", "light", "dark"]


@dataclass(frozen=True)
class Preferences:
    """Her theme (system, light or dark) and language (a code, or AUTOMATIC)."""

    theme: str = UserPreference.Theme.SYSTEM.value
    language: str = AUTOMATIC


DEFAULTS = Preferences()


class DisplayPreferencesInput(ClientInput):
    """A change of her preferences: the fields given change, the others stay."""

    theme: Theme | None = None
    language: str | None = None

    @field_validator("language")
    @classmethod
    def _known(cls, value: str | None) -> str | None:
        if value is not None and value != AUTOMATIC and value not in language_codes():
            known = ", ".join((AUTOMATIC, *language_codes()))
            raise ValueError(_("give one of: %(known)s") % {"known": known})
        return value


def language_codes() -> tuple[str, ...]:
    return tuple(code for code, _name in settings.LANGUAGES)


def preferences_of(*, user) -> Preferences:
    """Her preferences, or the defaults (one query)."""
    row = (
        UserPreference.objects.filter(user_id=user.pk)
        .values_list("theme", "language")
        .first()
    )
    if row is None:
        return DEFAULTS
    theme, language = row
    # A language since taken out of settings.LANGUAGES reads as automatic.
    return Preferences(
        theme=theme, language=language if language in language_codes() else AUTOMATIC
    )


def set_preferences(
    *, user, theme: str | None = None, language: str | None = None
) -> Preferences:
    """Store the preferences given (None: unchanged); returns all of hers."""
    changes = {
        name: value
        for name, value in (("theme", theme), ("language", language))
        if value is not None
    }
    if changes:
        UserPreference.objects.update_or_create(user_id=user.pk, defaults=changes)
    return preferences_of(user=user)


def language_for(*, chosen: str, accept_language: str = "") -> str:
    """The language to speak: `chosen` if it is one of settings.LANGUAGES, else
    the browser's first that is (Accept-Language), else settings.LANGUAGE_CODE."""
    if chosen in language_codes():
        return chosen
    for code, _quality in parse_accept_lang_header(accept_language or ""):
        if code == "*":
            break
        try:
            return translation.get_supported_language_variant(code)
        except LookupError:
            continue
    return translation.get_supported_language_variant(settings.LANGUAGE_CODE)


class PreferenceMiddleware:
    """A signed-in web session speaks her chosen language; the browser's otherwise
    (LocaleMiddleware, before this one, already activated it)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        chosen = DEFAULTS
        if request.user.is_authenticated:
            chosen = preferences_of(user=request.user)
        request.preferences = chosen
        if chosen.language != AUTOMATIC:
            translation.activate(chosen.language)
            request.LANGUAGE_CODE = chosen.language
        return self.get_response(request)


def display(request: HttpRequest) -> dict[str, str]:
    """The template context of base.html: her theme and language choices."""
    chosen = getattr(request, "preferences", DEFAULTS)
    return {"ui_theme": chosen.theme, "ui_language": chosen.language}


def socket_language(*, scope: dict) -> str:
    """The language of a socket's frames: hers when her browser's session cookie
    signed it in, else its handshake's Accept-Language (a token's, as on REST)."""
    headers = dict(scope.get("headers") or [])
    accept = headers.get(b"accept-language", b"").decode("latin-1")
    user = scope.get("user")
    chosen = AUTOMATIC
    if scope.get("auth_method") == "cookie" and user is not None:
        if user.is_authenticated:
            chosen = preferences_of(user=user).language
    return language_for(chosen=chosen, accept_language=accept)


def recipient_language(*, user_id: int | None) -> str:
    """The language of what is sent to her away from a page (a notice's mail): her
    chosen one, else settings.LANGUAGE_CODE (no browser to ask)."""
    chosen = AUTOMATIC
    if user_id is not None:
        row = UserPreference.objects.filter(user_id=user_id).values("language")
        chosen = next(iter(row), {"language": AUTOMATIC})["language"]
    return language_for(chosen=chosen)
