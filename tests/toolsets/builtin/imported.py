"""Imported toolsets a test registers in settings.TOOLCRIB_TOOLSETS by dotted path.

Set by the test (the servers' ports are only known then), e.g.
`imported.pets = import_openapi_spec(...)` with
`settings.TOOLCRIB_TOOLSETS = {"pets": "tests.toolsets.builtin.imported.pets"}`:
the way a deployment registers an import in code today.
"""

from google.adk.tools.base_toolset import BaseToolset

pets: BaseToolset | None = None
calc: BaseToolset | None = None
