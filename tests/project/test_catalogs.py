"""The German catalog of the server side is whole (docs/i18n.md): every msgid of
locale/de/LC_MESSAGES/django.po translated, none fuzzy, each keeping the
placeholders of its English, and compiled to the .mo Django reads."""

import re
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.utils import translation

CATALOG = Path(settings.BASE_DIR) / "locale" / "de" / "LC_MESSAGES" / "django.po"
PLACEHOLDER = re.compile(r"%\(\w+\)[sdr]|\{\{\s*\w+\s*\}\}")


@pytest.fixture(scope="module")
def catalog() -> polib.POFile:
    return polib.pofile(str(CATALOG))


def test_the_german_catalog_has_no_untranslated_entry(catalog):
    assert [entry.msgid for entry in catalog.untranslated_entries()] == []


def test_the_german_catalog_has_no_fuzzy_entry(catalog):
    assert not catalog.metadata_is_fuzzy
    assert [entry.msgid for entry in catalog.fuzzy_entries()] == []


def test_every_translation_keeps_its_placeholders(catalog):
    wrong = [
        entry.msgid
        for entry in catalog.translated_entries()
        if sorted(PLACEHOLDER.findall(entry.msgid))
        != sorted(PLACEHOLDER.findall(entry.msgstr))
    ]
    assert wrong == []


def test_the_compiled_catalog_is_the_one_django_reads(catalog):
    with translation.override("de"):
        assert translation.gettext("Sign out") == "Abmelden"
        assert (
            translation.gettext("No such session.")
            == catalog.find("No such session.").msgstr
        )
