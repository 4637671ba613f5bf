"""The files toolset: a per-user workspace stored as artifacts.

Files are ADK artifacts named `user:workspace/<path>`, saved and loaded through the
tool's Context, so they live in whatever artifact service the Runner has (Django's
in Toolcrib, in-memory in tests). The `user:` scope makes the workspace the user's
across sessions (ADK scopes it by app too: one workspace per user and agent).
Every write is a new artifact version; reads return the latest.

A path is relative and `/`-separated; each name is letters, digits, space and
`._-+@`, starting with a letter, digit or `_`. So: no `..` or `.`, no absolute
paths, no backslashes, drive letters, URLs, control characters or NUL, no `~`.
An artifact that is a reference (a `file_data` part, the artifact store's
symlink) to anything but another artifact (`file://`, `gs://`, `https://`) is
never followed. The artifact service itself resolves `artifact://` references and
keeps them inside the same app and user (ADK refuses other scopes at save and at
load), so a reference can show only the user's own artifacts.

Limits (Django settings, read on every call): TOOLCRIB_BUILTIN_FILES_MAX_BYTES per
file, TOOLCRIB_BUILTIN_FILES_MAX_FILES per workspace.

Next to the workspace, an absolute path (`/srv/reports/q3.csv`) reaches the host
folders an administrator allows (TOOLCRIB_BUILTIN_FILES_ALLOWED_PATHS,
toolsets.builtin.hostfiles): read only, or writable where marked `:rw`.
"""

import asyncio
import mimetypes
import re
from typing import Any

from django.conf import settings
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.tools import ToolContext
from google.genai import types

from toolsets.builtin import hostfiles
from toolsets.builtin.base import BuiltinTool, BuiltinToolset
from toolsets.refusals import Refusal

WORKSPACE = "user:workspace/"
MAX_PATH_CHARS = 512
MAX_NAME_CHARS = 128
# A name starts with a letter, digit or _, so never with a dot, dash or space.
NAME = re.compile(r"\w[\w .+@-]*")
TEXT_MIME_PREFIXES = ("text/", "application/json", "application/xml")


class PathRefused(Refusal):
    """A path that is not a file inside the workspace."""


def workspace_path(path: Any) -> str:
    """The path, checked: relative, inside the workspace, plain names only."""
    if not isinstance(path, str) or not path:
        raise PathRefused("path must be a non-empty relative path like notes/todo.md")
    if len(path) > MAX_PATH_CHARS:
        raise PathRefused(f"path is longer than {MAX_PATH_CHARS} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise PathRefused("path contains a control character or NUL")
    if "\\" in path:
        raise PathRefused("path contains a backslash; separate folders with /")
    if path.startswith(("/", "~")):
        raise PathRefused(f"{path!r} is absolute; paths are relative to the workspace")
    if ":" in path:
        raise PathRefused(f"{path!r} contains ':'; drive letters and URLs are refused")
    for name in path.split("/"):
        _check_name(name, path)
    return path


def _check_name(name: str, path: str) -> None:
    if name in ("", "."):
        raise PathRefused(f"{path!r} has an empty or '.' part")
    if name == "..":
        raise PathRefused(f"{path!r} would leave the workspace ('..')")
    if len(name) > MAX_NAME_CHARS:
        raise PathRefused(f"{name!r} is longer than {MAX_NAME_CHARS} characters")
    if not NAME.fullmatch(name) or name.endswith((".", " ")):
        raise PathRefused(
            f"{name!r} is not a plain file name (letters, digits, space, ._-+@)"
        )


def artifact_name(path: Any) -> str:
    """The artifact a workspace path is stored as."""
    return WORKSPACE + workspace_path(path)


def max_bytes() -> int:
    return int(settings.TOOLCRIB_BUILTIN_FILES_MAX_BYTES)


async def _workspace_files(tool_context: ToolContext) -> list[str]:
    try:
        keys = await tool_context.list_artifacts()
    except ValueError as exc:  # no artifact service on the Runner
        raise Refusal("files are unavailable: no artifact service") from exc
    return sorted(k.removeprefix(WORKSPACE) for k in keys if k.startswith(WORKSPACE))


async def list_files(tool_context: ToolContext, folder: str = "") -> dict:
    """List the files in your workspace, or in a folder of the server you may reach.

    Args:
        folder: Only list files under this folder, e.g. "notes"; all files if empty.
            An absolute path (e.g. "/srv/reports") lists a server folder.

    Returns:
        The paths of the files, and the server folders you may reach, if any.
    """
    if hostfiles.is_host_path(folder):
        limit = int(settings.TOOLCRIB_BUILTIN_FILES_MAX_FILES)
        files = await asyncio.to_thread(hostfiles.list_files, folder, limit)
        return {"status": "success", "files": files, "count": len(files)}
    files = await _workspace_files(tool_context)
    if folder:
        name = folder.rstrip("/") if isinstance(folder, str) else folder
        prefix = workspace_path(name) + "/"
        files = [f for f in files if f.startswith(prefix)]
    answer = {"status": "success", "files": files, "count": len(files)}
    if not folder and (folders := hostfiles.allowed_folders()):
        answer["server_folders"] = folders
    return answer


async def read_file(path: str, tool_context: ToolContext) -> dict:
    """Read a text file from your workspace, or from a server folder you may reach.

    Args:
        path: The file's path in the workspace, e.g. "notes/todo.md", or an
            absolute path in a server folder, e.g. "/srv/reports/q3.csv".

    Returns:
        The file's text.
    """
    if hostfiles.is_host_path(path):
        text = await asyncio.to_thread(hostfiles.read_text, path, max_bytes())
        size = len(text.encode("utf-8"))
        return {"status": "success", "path": path, "content": text, "bytes": size}
    name = artifact_name(path)
    try:
        part = await tool_context.load_artifact(name)
    except InputValidationError as exc:  # a reference out of the user's scope
        raise PathRefused(f"{path!r} refers outside your workspace") from exc
    except ValueError as exc:
        raise Refusal("files are unavailable: no artifact service") from exc
    if part is None:
        raise Refusal(f"there is no file {path!r} in the workspace")
    data = _content(part, path)
    if len(data) > max_bytes():
        raise Refusal(f"{path!r} is larger than {max_bytes()} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refusal(f"{path!r} is a binary file, not text") from exc
    return {"status": "success", "path": path, "content": text, "bytes": len(data)}


def _content(part: types.Part, path: str) -> bytes:
    if part.file_data is not None:
        raise PathRefused(
            f"{path!r} is a link to {part.file_data.file_uri}; not followed"
        )
    if part.inline_data is not None:
        return part.inline_data.data or b""
    if part.text is not None:
        return part.text.encode("utf-8")
    raise Refusal(f"{path!r} has no content that can be read")


async def write_file(path: str, content: str, tool_context: ToolContext) -> dict:
    """Write a text file to your workspace (or a writable server folder), replacing
    it if it exists.

    Args:
        path: The file's path in the workspace, e.g. "notes/todo.md", or an
            absolute path in a writable server folder.
        content: The whole text of the file.

    Returns:
        The path, its size and its version (0 for a new file; none on the server).
    """
    if not isinstance(content, str):
        raise Refusal("content must be text")
    data = content.encode("utf-8")
    if len(data) > max_bytes():
        raise Refusal(f"the content is larger than {max_bytes()} bytes")
    if hostfiles.is_host_path(path):
        size = await asyncio.to_thread(hostfiles.write_text, path, content)
        return {"status": "success", "path": path, "bytes": size}
    name = artifact_name(path)
    files = await _workspace_files(tool_context)
    limit = int(settings.TOOLCRIB_BUILTIN_FILES_MAX_FILES)
    if path not in files and len(files) >= limit:
        raise Refusal(f"the workspace already holds {limit} files; delete some first")
    mime_type = mimetypes.guess_type(path)[0] or "text/plain"
    if not mime_type.startswith(TEXT_MIME_PREFIXES):
        mime_type = "text/plain"
    part = types.Part.from_bytes(data=data, mime_type=mime_type)
    version = await tool_context.save_artifact(name, part)
    return {"status": "success", "path": path, "bytes": len(data), "version": version}


async def delete_file(path: str, tool_context: ToolContext) -> dict:
    """Delete a file from your workspace, with all its versions (or from a
    writable server folder).

    Args:
        path: The file's path in the workspace, or an absolute server path.
    """
    if hostfiles.is_host_path(path):
        await asyncio.to_thread(hostfiles.delete, path)
        return {"status": "success", "path": path, "deleted": True}
    name = artifact_name(path)
    if path not in await _workspace_files(tool_context):
        raise Refusal(f"there is no file {path!r} in the workspace")
    context = tool_context.get_invocation_context()
    await context.artifact_service.delete_artifact(
        app_name=context.app_name,
        user_id=context.user_id,
        filename=name,
        session_id=context.session.id,
    )
    return {"status": "success", "path": path, "deleted": True}


class FilesToolset(BuiltinToolset):
    """Your own workspace of text files: list, read, write and delete."""

    # A new catalog row is granted only: it stores and deletes data (issue 14).
    catalog_defaults = {"default_policy": "granted_only"}

    def __init__(self, **kwargs: Any) -> None:
        tools = [
            BuiltinTool(list_files, risk="read"),
            BuiltinTool(read_file, risk="read"),
            BuiltinTool(write_file, risk="write"),
            BuiltinTool(delete_file, risk="dangerous"),
        ]
        super().__init__(tools, **kwargs)


toolset = FilesToolset()
