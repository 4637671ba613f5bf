"""The shell's workspace quota: how much disk one user's working folder may hold.

TOOLCRIB_BUILTIN_SHELL_QUOTA_MB (docs/builtin-tools.md#the-workspace-quota), 0 for
none. No mount, loop device or filesystem quota is needed (a server that is not
root has none of them, and bubblewrap gives no size to a folder it binds), so the
quota is kept around each command, in four steps:

- before it runs, the folder is measured: blocks on disk, each file once however
  many links it has, and at least one block (4 KiB) per file or folder, so a flood
  of empty files fills it too;
- the command may grow no file past what is left (RLIMIT_FSIZE, which prlimit sets
  with the sandbox's other limits): one file cannot pass the quota at all, and a
  command killed by that limit counts as having reached the quota;
- while it runs, the folder is measured again (every POLL seconds, or less often
  when measuring takes longer) and the command is killed once the folder is over
  the quota: many files at once pass it by at most what they write meanwhile;
- after it ends, a command that took the folder to its quota or past it has what
  it wrote undone (files it made deleted, files it grew cut back to their size,
  folders it made removed) and the call is refused with the quota's message. A
  folder still full (the quota was lowered) refuses every call that leaves it so,
  with the same message; commands still run, so `rm` makes room.

A user's commands run one at a time (a lock on the folder, held across processes),
so one command's undo never touches what another one wrote.
"""

import asyncio
import contextlib
import fcntl
import logging
import os
import signal
import stat
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from toolsets.builtin import sandbox
from toolsets.refusals import Refusal

logger = logging.getLogger(__name__)

MB = 1024**2
BLOCK = 4096  # what an empty file or a folder counts for, at least
POLL = 0.1  # seconds between two measures while a command runs, at the least
LOCK_POLL = 0.05
LARGEST_SHOWN = 5
# bwrap's exit status for a command killed by SIGXFSZ, the file size limit's signal.
FILE_SIZE_EXCEEDED = 128 + signal.SIGXFSZ

Inode = tuple[int, int]


class QuotaReached(Refusal):
    """The working folder is at or over its quota."""


class WorkspaceBusy(Refusal):
    """Another command of the same user still runs in the working folder."""


@dataclass
class Scan:
    """A working folder measured: the bytes it counts for, and what it holds."""

    used: int = 0
    sizes: dict[Inode, int] = field(default_factory=dict)  # inode -> st_size
    files: list[tuple[Path, os.stat_result]] = field(default_factory=list)
    folders: list[tuple[Path, os.stat_result]] = field(default_factory=list)


def quota_bytes() -> int | None:
    """The quota in bytes, or None when there is none."""
    quota = int(settings.TOOLCRIB_BUILTIN_SHELL_QUOTA_MB)
    return quota * MB if quota > 0 else None


async def run_within_quota(
    program: str, args: Sequence[str], folder: Path
) -> sandbox.Completed:
    """Run a program in the sandbox, in `folder`, held to the user's quota.

    Raises QuotaReached when the command took the folder to its quota or past it
    (what it wrote is undone first) or left it full, and the sandbox's refusals.
    """
    quota = quota_bytes()
    if quota is None:
        return await sandbox.run_sandboxed(program, args, folder)
    async with _locked(folder):
        before = await asyncio.to_thread(scan, folder)
        left = max(quota - before.used, 0)
        largest_file = int(settings.TOOLCRIB_BUILTIN_SHELL_MAX_FILE_BYTES)
        stop = asyncio.Event()
        watcher = asyncio.create_task(_watch(folder, quota, stop))
        try:
            completed = await sandbox.run_sandboxed(
                program,
                args,
                folder,
                max_file_bytes=min(left, largest_file),
                stop=stop,
            )
        except Refusal as refusal:
            reached = await _settle(watcher, folder, before, quota, stop.is_set())
            if reached is not None:
                raise reached from refusal
            raise
        except BaseException:  # cancelled (the turn stopped): undo, say nothing
            await _settle(watcher, folder, before, quota, stop.is_set())
            raise
        # Killed by the file size limit while that limit was what is left of the
        # quota: it tried to write past the quota (a write that fails whole, as
        # fallocate's, leaves the folder short of it).
        cut = left < largest_file and completed.exit_code == FILE_SIZE_EXCEEDED
        reached = await _settle(watcher, folder, before, quota, stop.is_set() or cut)
        if reached is not None:
            raise reached
        return completed


@contextlib.asynccontextmanager
async def _locked(folder: Path) -> AsyncIterator[None]:
    """Hold the folder's lock (flock on the folder itself: across processes, and
    between two opens in one process), waiting for a running command at most its
    timeout."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        waited_for = float(settings.TOOLCRIB_BUILTIN_SHELL_TIMEOUT) + 5
        deadline = time.monotonic() + waited_for
        while not _try_lock(fd):
            if time.monotonic() > deadline:
                raise WorkspaceBusy(
                    "another command of yours is still running in your working "
                    "folder; try again once it has ended"
                )
            await asyncio.sleep(LOCK_POLL)
        yield
    finally:
        os.close(fd)  # and with it the lock


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


async def _watch(folder: Path, quota: int, stop: asyncio.Event) -> None:
    """Set `stop` once the folder is over the quota."""
    pause = POLL
    while True:
        await asyncio.sleep(pause)
        started = time.monotonic()
        used = (await asyncio.to_thread(scan, folder)).used
        if used > quota:
            stop.set()
            return
        # A large folder is measured less often: at most a third of the time.
        pause = max(POLL, 2 * (time.monotonic() - started))


async def _settle(
    watcher: asyncio.Task, folder: Path, before: Scan, quota: int, stopped: bool
) -> QuotaReached | None:
    """After the command: undo what it wrote if it reached the quota (or was
    `stopped` for it); the refusal when it did or the folder is still full."""
    watcher.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await watcher
    return await asyncio.to_thread(settle, folder, before, quota, stopped)


def settle(
    folder: Path, before: Scan, quota: int, stopped: bool
) -> QuotaReached | None:
    """See _settle()."""
    after = scan(folder)
    if after.used < quota and not stopped:
        return None
    undone = stopped or after.used > before.used
    if undone:
        undo(before, after)
        after = scan(folder)
    return QuotaReached(message(folder, quota, after, undone=undone))


def message(folder: Path, quota: int, found: Scan, *, undone: bool) -> str:
    """The refusal the model and the user read."""
    said = f"workspace quota of {quota // MB} MB reached"
    if undone:
        said += ": the command was stopped and what it wrote was removed"
    used = f"{found.used / MB:.1f} MB used"
    if found.used < quota:
        used += f", {(quota - found.used) / MB:.1f} MB left"
    said += f" ({used}). Delete files you no longer need (rm) to make room"
    largest = sorted(found.files, key=lambda e: e[1].st_blocks, reverse=True)
    shown = [
        f"{path.relative_to(folder)} ({info.st_blocks * 512 / MB:.1f} MB)"
        for path, info in largest[:LARGEST_SHOWN]
    ]
    return said + (f"; the largest: {', '.join(shown)}." if shown else ".")


# Measuring.


def scan(folder: Path) -> Scan:
    """What the folder holds and the bytes it counts for (see the module's doc)."""
    found = Scan()
    for path, info in _walk(folder):
        if stat.S_ISDIR(info.st_mode):
            found.folders.append((path, info))
        else:
            found.files.append((path, info))
        inode = (info.st_dev, info.st_ino)
        if inode not in found.sizes:
            found.sizes[inode] = info.st_size
            found.used += max(info.st_blocks * 512, BLOCK)
    return found


def _walk(folder: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """Every entry under `folder`, a folder before what it holds; links not followed.

    What vanishes while a command runs is skipped.
    """
    pending = [folder]
    while pending:
        for entry in _listed(pending.pop()):
            try:
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            path = Path(entry.path)
            yield path, info
            if stat.S_ISDIR(info.st_mode):
                pending.append(path)


def _listed(folder: Path) -> list[os.DirEntry]:
    try:
        return _entries(folder)
    except FileNotFoundError:
        return []
    except PermissionError:
        # A server that is not root owns what its commands make, and a command
        # may have taken the rights to its own folder away: give them back.
        os.chmod(folder, 0o700)
        return _entries(folder)


def _entries(folder: Path) -> list[os.DirEntry]:
    with os.scandir(folder) as entries:
        return list(entries)


# Undoing.


def undo(before: Scan, after: Scan) -> None:
    """Delete the files made since `before`, cut those grown back to their size,
    and remove the folders made, if empty (what was moved into one stays)."""
    for path, info in after.files:
        size = before.sizes.get((info.st_dev, info.st_ino))
        if size is None:
            _as_owner(os.unlink, path, path.parent)
        elif stat.S_ISREG(info.st_mode) and info.st_size > size:
            _as_owner(lambda p, size=size: _cut(p, size), path, path)
    made = [p for p, i in after.folders if (i.st_dev, i.st_ino) not in before.sizes]
    for path in sorted(made, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):  # not empty: it holds older files
            os.rmdir(path)


def _cut(path: Path, size: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        os.ftruncate(fd, size)
    finally:
        os.close(fd)


def _as_owner(change: Callable[[Path], None], path: Path, guarded: Path) -> None:
    """Run `change` on `path`; once more after giving its owner's rights back to
    `guarded` (see _listed). Logged, not raised, when it still fails."""
    try:
        change(path)
    except FileNotFoundError:
        return
    except PermissionError:
        try:
            os.chmod(guarded, 0o700 if guarded.is_dir() else 0o600)
            change(path)
        except OSError:
            logger.warning("shell quota could not undo path=%s", path, exc_info=True)
    except OSError:
        logger.warning("shell quota could not undo path=%s", path, exc_info=True)
