"""The built-in toolsets as the catalog sees them (settings.TOOLCRIB_TOOLSETS)."""

import pytest

from toolsets.catalog import sync_catalog
from toolsets.models import Tool, Toolset

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db

BUILTIN = {"math", "http", "webpage", "files", "sql", "shell", "search"}


@pytest.fixture
def builtin_only(settings):
    settings.TOOLCRIB_TOOLSETS = {
        name: path
        for name, path in settings.TOOLCRIB_TOOLSETS.items()
        if path.startswith("toolsets.builtin.")
    }
    return settings


def test_every_builtin_toolset_is_registered_in_settings(settings):
    assert BUILTIN <= set(settings.TOOLCRIB_TOOLSETS)


def test_builtin_toolsets_are_catalogued_with_source_builtin(builtin_only):
    sync_catalog()
    assert (
        set(
            Toolset.objects.filter(source=Toolset.Source.BUILTIN).values_list(
                "name", flat=True
            )
        )
        == BUILTIN
    )
    risks = dict(Tool.objects.values_list("full_name", "risk"))
    assert risks == {
        "math.calculate": "read",
        "http.http_get": "read",
        "http.http_post": "write",
        "webpage.fetch_webpage": "read",
        "files.list_files": "read",
        "files.read_file": "read",
        "files.write_file": "write",
        "files.delete_file": "dangerous",
        "sql.run_query": "read",
        "sql.list_tables": "read",
        "shell.run_command": "dangerous",
        "search.web_search": "read",
    }


def test_the_shell_toolset_row_starts_disabled(builtin_only):
    sync_catalog()
    shell = Toolset.objects.get(name="shell")
    assert (shell.enabled, shell.default_policy) == (False, "granted_only")


def test_the_search_toolset_starts_granted_only(builtin_only):
    sync_catalog()
    assert Toolset.objects.get(name="search").default_policy == "granted_only"
