"""What a URL path may hold: row ids, names and artifact names, as Django path converters.

Registered once, when the root URLconf imports this module, and used by every app's
URLs: `<id:pk>` (ASCII digits within the database's bigint range), `<name:pk>`
(anything but a slash or a NUL) and `<filename:name>` (anything but a NUL). A path
that breaks the rule is no such page (404), never a 500. The query string's rules
are agents.params'.
"""

from django.urls import register_converter

BIGINT_MAX = 2**63 - 1
DIGITS = "[0-9]+"  # not \d, which matches every Unicode digit
NAME = "[^/\x00]+"
FILENAME = "[^\x00]+"  # an artifact's name may hold slashes


class IdConverter:
    """`<id:pk>`: a row id in a URL. Anything else is no such page (404)."""

    regex = DIGITS

    def to_python(self, value: str) -> int:
        number = int(value)
        if not 1 <= number <= BIGINT_MAX:
            raise ValueError(value)  # Django then tries the next pattern: a 404
        return number

    def to_url(self, value: int) -> str:
        return str(value)


class NameConverter:
    """`<name:pk>`: a session id or a name in a URL; with a NUL, no such page (404)."""

    regex = NAME

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class FilenameConverter(NameConverter):
    """`<filename:filename>`: an artifact's name, slashes included; with a NUL, 404."""

    regex = FILENAME


ID_CONVERTER = "id"
NAME_CONVERTER = "name"
register_converter(IdConverter, ID_CONVERTER)
register_converter(NameConverter, NAME_CONVERTER)
register_converter(FilenameConverter, "filename")
