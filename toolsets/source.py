"""The toolset source agents resolve names through (settings.TOOLCRIB_TOOLSET_SOURCE).

A name an agent spec lists that settings' TOOLCRIB_TOOLSETS does not is one of the
imports an administrator stored (toolsets.imports.stored). The runtime reaches them
only through this object, named by a dotted path, so it never imports governance.
"""

from collections.abc import Iterable

from google.adk.tools.base_toolset import BaseToolset

from toolsets.imports.stored import resolve_stored, stored_names, stored_versions


class StoredImports:
    """Toolset names resolved to the MCP and OpenAPI imports an administrator stored."""

    def resolve(self, name: str) -> list[BaseToolset] | None:
        """The toolsets for `name`; None if it was never imported."""
        return resolve_stored(name)

    def versions(self, names: Iterable[str]) -> str:
        """A string that changes whenever one of these imports changes."""
        return stored_versions(names)

    def names(self) -> set[str]:
        """Every name an agent spec may list besides settings' toolsets."""
        return stored_names()


STORED_IMPORTS = StoredImports()
