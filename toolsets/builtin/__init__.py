"""Toolcrib's built-in toolsets, each an ADK BaseToolset registered in settings.

| catalog name | module     | tools                                              |
|--------------|------------|----------------------------------------------------|
| math         | calculator | calculate                                          |
| http         | http       | http_get, http_post                                |
| webpage      | webpage    | fetch_webpage                                      |
| files        | files      | list_files, read_file, write_file, delete_file     |
| sql          | sql        | run_query, list_tables                             |
| shell        | shell      | run_command (its catalog row starts disabled)      |
| search       | search     | web_search                                         |

Each module's `toolset` is the shared instance settings.TOOLCRIB_TOOLSETS names.
The toolsets that reach outside Toolcrib or hold data (http, webpage, files, sql,
shell, search) start `granted_only` (their `catalog_defaults`): nobody uses them until an
administrator grants them; math starts with TOOLCRIB_TOOLSET_DEFAULT_POLICY.
Policy knobs are TOOLCRIB_BUILTIN_* settings, read on every call. A refused call
is answered with {"status": "error", "error_message": ...}. docs/builtin-tools.md
is the administrator's guide.
"""
