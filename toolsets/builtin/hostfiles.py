"""Folders of this host the files tools reach, next to each user's workspace.

TOOLCRIB_BUILTIN_FILES_ALLOWED_PATHS lists them (the GoAgent FileOperations'
allowedPaths): `/srv/reports` is read only, `/srv/out:rw` may be written and
deleted in too. A path the model gives that starts with `/` is a host path; any
other is in the user's workspace (toolsets.builtin.files). A folder that is,
holds or lies inside the data folder, the media folder or the project is never
reached (it is left out, and logged).

Every host path is checked where it really is, not where it says it is: its
folder is opened, the folder's real place (through /proc/self/fd) must be inside
an allowed folder, and the file is opened relative to that open folder without
following a link (O_NOFOLLOW). So `..`, a link out of the folder, or a link
swapped in between the check and the open, reach nothing outside. Host paths are
the server's files: every user with the tool reaches the same ones, unlike the
workspace. Text only, TOOLCRIB_BUILTIN_FILES_MAX_BYTES per file.
"""

import logging
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.conf import settings

from toolsets.builtin.base import kept_folder
from toolsets.refusals import Refusal

logger = logging.getLogger(__name__)

WRITABLE_SUFFIX = ":rw"
MAX_PATH_CHARS = 4096


class HostPathRefused(Refusal):
    """A host path outside the allowed folders, or an action they do not allow."""


@dataclass(frozen=True)
class Root:
    """An allowed folder, where it really is."""

    path: Path
    writable: bool

    def holds(self, place: Path) -> bool:
        return place == self.path or self.path in place.parents


def is_host_path(path: object) -> bool:
    return isinstance(path, str) and path.startswith("/")


def roots() -> list[Root]:
    """The allowed folders, from settings; a misconfigured one is left out."""
    found = []
    for entry in settings.TOOLCRIB_BUILTIN_FILES_ALLOWED_PATHS:
        text, writable = entry, False
        if entry.endswith(WRITABLE_SUFFIX):
            text, writable = entry.removesuffix(WRITABLE_SUFFIX), True
        folder = Path(text)
        if not folder.is_absolute():
            logger.warning("files: allowed path %s is not absolute; left out", text)
            continue
        real = folder.resolve()
        if kept_folder(real) is not None:
            logger.warning("files: allowed path %s is Toolcrib's own; left out", real)
            continue
        found.append(Root(real, writable))
    return found


def checked(path: str) -> PurePosixPath:
    """A host path, checked: absolute, no control characters, no `.` or `..`."""
    if len(path) > MAX_PATH_CHARS:
        raise HostPathRefused(f"path is longer than {MAX_PATH_CHARS} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise HostPathRefused("path contains a control character or NUL")
    parts = path.split("/")[1:]
    if path != "/" and any(part in ("", ".", "..") for part in parts):
        raise HostPathRefused(f"{path!r} has an empty, '.' or '..' part")
    return PurePosixPath(path)


@contextmanager
def _folder(path: PurePosixPath, *, write: bool) -> Iterator[tuple[int, Root]]:
    """The open folder at `path`, and the allowed folder it really lies in."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError as exc:
        raise HostPathRefused(f"there is no folder {str(path)!r}") from exc
    except OSError as exc:
        raise HostPathRefused(
            f"{str(path)!r} cannot be opened: {exc.strerror}"
        ) from exc
    try:
        real = Path(os.path.realpath(f"/proc/self/fd/{fd}"))
        root = next((root for root in roots() if root.holds(real)), None)
        if root is None:
            raise HostPathRefused(
                f"{str(path)!r} is outside the folders the files tools may reach"
                f"{_listed()}"
            )
        if write and not root.writable:
            raise HostPathRefused(f"{root.path} is read only")
        yield fd, root
    finally:
        os.close(fd)


def _listed() -> str:
    allowed = [str(root.path) for root in roots()]
    return f" ({', '.join(allowed)})" if allowed else " (none is allowed)"


def _file_name(path: PurePosixPath) -> str:
    if not path.name:
        raise HostPathRefused("path names a folder, not a file")
    return path.name


def read_text(path: str, max_bytes: int) -> str:
    """The text of a host file."""
    where = checked(path)
    with _folder(where.parent, write=False) as (folder, _root):
        try:
            fd = os.open(
                _file_name(where),
                os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC,
                dir_fd=folder,
            )
        except FileNotFoundError as exc:
            raise Refusal(f"there is no file {path!r}") from exc
        except OSError as exc:  # ELOOP: a link, never followed
            raise HostPathRefused(f"{path!r} cannot be read: {exc.strerror}") from exc
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise HostPathRefused(f"{path!r} is not a plain file")
            data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise Refusal(f"{path!r} is larger than {max_bytes} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refusal(f"{path!r} is a binary file, not text") from exc


def write_text(path: str, content: str) -> int:
    """Write a host file in a writable folder (replacing it); its size in bytes."""
    where = checked(path)
    data = content.encode("utf-8")
    with _folder(where.parent, write=True) as (folder, _root):
        try:
            fd = os.open(
                _file_name(where),
                os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o644,
                dir_fd=folder,
            )
        except OSError as exc:
            raise HostPathRefused(
                f"{path!r} cannot be written: {exc.strerror}"
            ) from exc
        with os.fdopen(fd, "wb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise HostPathRefused(f"{path!r} is not a plain file")
            file.write(data)
    return len(data)


def delete(path: str) -> None:
    """Delete a host file in a writable folder (a link itself, never its target)."""
    where = checked(path)
    with _folder(where.parent, write=True) as (folder, _root):
        name = _file_name(where)
        try:
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError as exc:
            raise Refusal(f"there is no file {path!r}") from exc
        if stat.S_ISDIR(info.st_mode):
            raise HostPathRefused(f"{path!r} is a folder; only files are deleted")
        os.unlink(name, dir_fd=folder)


def list_files(folder: str, limit: int) -> list[str]:
    """The files under a host folder (links not followed), at most `limit`."""
    where = checked(folder.rstrip("/") or "/")
    with _folder(where, write=False) as (fd, root):
        real = Path(os.path.realpath(f"/proc/self/fd/{fd}"))
        found: list[str] = []
        for top, dirs, files in os.walk(real, followlinks=False):
            dirs.sort()
            for name in sorted(files):
                relative = (Path(top) / name).relative_to(real)
                found.append(str(where / relative))
                if len(found) >= limit:
                    return sorted(found)
    return sorted(found)


def allowed_folders() -> list[dict[str, object]]:
    """The allowed folders, as the model reads them."""
    return [{"path": str(root.path), "writable": root.writable} for root in roots()]
