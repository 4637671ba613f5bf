"""The shell tool's sandbox: every command runs inside bubblewrap (`bwrap`).

What a command sees (docs/builtin-tools.md#the-sandbox):
- `/usr` read-only, and `/bin`, `/sbin`, `/lib*` as the host has them (symlinks into
  `/usr` on Debian 12, read-only binds on older layouts);
- `/etc` with only `ld.so.cache` (where the libraries are) and `alternatives` (the
  links Debian's `awk`, `editor` or `which` go through): no passwd, hostname,
  resolv.conf or anything else of the host's;
- its own `/proc` (a fresh PID namespace: no host process), a minimal `/dev` and a
  private, size-limited `/tmp`;
- its own folder, read-write at `/work`, its working directory and `HOME`;
- no network (an empty network namespace), its own IPC, UTS and cgroup namespaces;
  every other path of the root is an empty, read-only tmpfs.

It runs without rights: on a root server bwrap builds the namespaces and `setpriv`
drops to TOOLCRIB_BUILTIN_SHELL_UID:GID with no capabilities before the command
starts (a user with no rights on the server's files, and the kernel enforces the
process limit only for a uid that is not root); on any other server bwrap's user
namespace maps the server's own user, without capabilities and unable to make
further namespaces. `prlimit` then sets hard limits the command cannot raise:
address space, CPU seconds, file size, processes, open files, no core dumps.

The Python side keeps the wall-clock timeout, the output limit, a caller's stop
(the workspace quota's, quota.py) and the kill of the whole process group (bwrap
dies, and with it, its PID namespace).
"""

import asyncio
import functools
import logging
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from toolsets.refusals import Refusal

logger = logging.getLogger(__name__)

MOUNT = "/work"
SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_ENTRIES = ("/etc/ld.so.cache", "/etc/alternatives")
PRLIMIT = "/usr/bin/prlimit"
SETPRIV = "/usr/bin/setpriv"
OPEN_FILES = 256
PROBE_TIMEOUT = 10.0
READ_CHUNK = 65536
REAP_TIMEOUT = 5.0


class SandboxUnavailable(Refusal):
    """No working sandbox on this machine: the shell toolset runs nothing."""


class Stopped(Refusal):
    """The caller's `stop` was set while the command ran: it was killed."""


@dataclass(frozen=True)
class Completed:
    """A command that ended in time and within the output limit."""

    exit_code: int
    output: bytes


def sandbox_problem() -> str | None:
    """Why commands cannot run in a sandbox here, or None when they can."""
    return _problem(
        settings.TOOLCRIB_BUILTIN_SHELL_BWRAP,
        _is_root(),
        int(settings.TOOLCRIB_BUILTIN_SHELL_UID),
        int(settings.TOOLCRIB_BUILTIN_SHELL_GID),
    )


@functools.cache
def _problem(configured: str, root: bool, uid: int, gid: int) -> str | None:
    """Decided once per process and configuration: a sandbox does not come and go.

    `root`, `uid` and `gid` are part of the key because the probe runs as they say.
    """
    bwrap = shutil.which(configured)
    problem = _missing(configured) if bwrap is None else _probe(bwrap, root=root)
    if problem is not None:
        logger.error("shell sandbox unavailable, the shell toolset is off: %s", problem)
    return problem


def _missing(configured: str) -> str:
    return (
        f"bubblewrap ({configured!r}) is not installed: install Debian's "
        "bubblewrap package (scripts/ensure-sandbox.sh does) or point "
        "TOOLCRIB_BUILTIN_SHELL_BWRAP at a bwrap binary"
    )


def _probe(bwrap: str, *, root: bool) -> str | None:
    """Run /usr/bin/true in the sandbox the way every command will run."""
    with tempfile.TemporaryDirectory(prefix="toolcrib-sandbox-probe-") as tmp:
        folder = Path(tmp) / "work"
        prepare_folder(folder)
        argv = sandbox_argv(bwrap, "/usr/bin/true", [], folder, root=root)
        try:
            result = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                env=environment(),
                timeout=PROBE_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap at {bwrap} did not run: {exc}"
    if result.returncode != 0:
        said = result.stderr.decode(errors="replace").strip()[-300:]
        return f"bubblewrap at {bwrap} failed its probe: {said or result.returncode}"
    return None


def _is_root() -> bool:
    return os.geteuid() == 0


def prepare_folder(folder: Path) -> None:
    """Create a command's folder, owned by the user the sandbox runs as."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if _is_root():
        os.chown(
            folder,
            int(settings.TOOLCRIB_BUILTIN_SHELL_UID),
            int(settings.TOOLCRIB_BUILTIN_SHELL_GID),
        )
    os.chmod(folder, 0o700)


def environment() -> dict[str, str]:
    """The whole environment a command sees."""
    return {
        "PATH": settings.TOOLCRIB_BUILTIN_SHELL_PATH,
        "HOME": MOUNT,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }


def is_visible(path: str) -> bool:
    """Whether a real (symlink-free) host path is one the sandbox shows."""
    roots = ["/usr", *(d for d in SYSTEM_DIRS if _is_real_dir(d))]
    return any(path == r or path.startswith(r + "/") for r in roots)


def _is_real_dir(path: str) -> bool:
    return os.path.isdir(path) and not os.path.islink(path)


def sandbox_argv(
    bwrap: str,
    program: str,
    args: Sequence[str],
    folder: Path,
    *,
    root: bool,
    max_file_bytes: int | None = None,
) -> list[str]:
    """The command line that runs `program args` in `folder`, sandboxed; no file
    larger than `max_file_bytes` (default: TOOLCRIB_BUILTIN_SHELL_MAX_FILE_BYTES)."""
    if max_file_bytes is None:
        max_file_bytes = int(settings.TOOLCRIB_BUILTIN_SHELL_MAX_FILE_BYTES)
    return [
        bwrap,
        *_namespaces(root=root),
        *_filesystem(folder),
        "--",
        *(_drop_to_sandbox_user() if root else []),
        *_limits(max_file_bytes),
        program,
        *args,
    ]


def _namespaces(*, root: bool) -> list[str]:
    common = [
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "sandbox",
    ]
    if root:
        # setpriv needs bwrap's capabilities to change user, then drops them all.
        return common
    return [
        *common,
        "--unshare-user",
        "--disable-userns",
        "--uid",
        str(settings.TOOLCRIB_BUILTIN_SHELL_UID),
        "--gid",
        str(settings.TOOLCRIB_BUILTIN_SHELL_GID),
        "--cap-drop",
        "ALL",
    ]


def _filesystem(folder: Path) -> list[str]:
    mounts = ["--ro-bind", "/usr", "/usr"]
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            mounts += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            mounts += ["--ro-bind", path, path]
    mounts += ["--perms", "0755", "--dir", "/etc"]
    for path in ETC_ENTRIES:
        mounts += ["--ro-bind-try", path, path]
    return [
        *mounts,
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(int(settings.TOOLCRIB_BUILTIN_SHELL_TMP_BYTES)),
        "--tmpfs",
        "/tmp",
        "--bind",
        str(folder),
        MOUNT,
        # Last: the root tmpfs holds only the mount points made above.
        "--remount-ro",
        "/",
        "--chdir",
        MOUNT,
    ]


def _drop_to_sandbox_user() -> list[str]:
    return [
        SETPRIV,
        f"--reuid={int(settings.TOOLCRIB_BUILTIN_SHELL_UID)}",
        f"--regid={int(settings.TOOLCRIB_BUILTIN_SHELL_GID)}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
    ]


def _limits(max_file_bytes: int) -> list[str]:
    """prlimit sets soft and hard limits alike: the command cannot raise them."""
    return [
        PRLIMIT,
        f"--as={int(settings.TOOLCRIB_BUILTIN_SHELL_MAX_MEMORY)}",
        f"--cpu={int(settings.TOOLCRIB_BUILTIN_SHELL_MAX_CPU)}",
        f"--fsize={int(max_file_bytes)}",
        f"--nproc={int(settings.TOOLCRIB_BUILTIN_SHELL_MAX_PROCESSES)}",
        f"--nofile={OPEN_FILES}",
        "--core=0",
        "--",
    ]


async def run_sandboxed(
    program: str,
    args: Sequence[str],
    folder: Path,
    *,
    max_file_bytes: int | None = None,
    stop: asyncio.Event | None = None,
) -> Completed:
    """Run a program in the sandbox, in `folder`, with every limit; no checks on args.

    `max_file_bytes` lowers the file size limit; the command is killed once `stop`
    is set (Stopped). Raises SandboxUnavailable when this machine has no working
    sandbox, and a Refusal when the command outlives the timeout or the output
    limit.
    """
    problem = await asyncio.to_thread(sandbox_problem)
    if problem is not None:
        raise SandboxUnavailable(f"the shell toolset is off: {problem}")
    bwrap = shutil.which(settings.TOOLCRIB_BUILTIN_SHELL_BWRAP)
    argv = sandbox_argv(
        str(bwrap),
        program,
        args,
        folder,
        root=_is_root(),
        max_file_bytes=max_file_bytes,
    )
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=environment(),
        start_new_session=True,
    )
    output = await _finish(process, stop)
    return Completed(exit_code=int(process.returncode or 0), output=output)


async def _finish(
    process: asyncio.subprocess.Process, stop: asyncio.Event | None
) -> bytes:
    """The output of a process that ends in time, within the output limit and
    before `stop` is set."""
    timeout = float(settings.TOOLCRIB_BUILTIN_SHELL_TIMEOUT)
    limit = int(settings.TOOLCRIB_BUILTIN_SHELL_MAX_OUTPUT)
    try:
        async with asyncio.timeout(timeout):
            return await _unless_stopped(_output(process, limit), stop)
    except TimeoutError as exc:
        raise Refusal(f"the command ran longer than {timeout} seconds") from exc
    finally:
        if process.returncode is None:
            _kill(process)
            await _reap(process)


async def _output(process: asyncio.subprocess.Process, limit: int) -> bytes:
    output = await _read(process, limit)
    await process.wait()
    return output


async def _unless_stopped(
    work: Coroutine[Any, Any, bytes], stop: asyncio.Event | None
) -> bytes:
    """Await `work`, unless `stop` is set first: then cancel it, raise Stopped."""
    if stop is None:
        return await work
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done():
            task.cancel()
        stopped.cancel()
        await asyncio.gather(task, stopped, return_exceptions=True)
    if task.cancelled():
        raise Stopped("the command was stopped")
    return task.result()


async def _read(process: asyncio.subprocess.Process, limit: int) -> bytes:
    output = bytearray()
    if process.stdout is None:
        return b""
    while chunk := await process.stdout.read(READ_CHUNK):
        output += chunk
        if len(output) > limit:
            raise Refusal(f"the command's output exceeded {limit} bytes")
    return bytes(output)


async def _reap(process: asyncio.subprocess.Process) -> None:
    """Wait for a killed command, reading its pipe to the end first.

    asyncio's wait() returns only once the pipe is closed too, and a reader that
    stopped at the output limit would otherwise never see it close.
    """
    try:
        async with asyncio.timeout(REAP_TIMEOUT):
            while process.stdout is not None and await process.stdout.read(READ_CHUNK):
                pass
            await process.wait()
    except TimeoutError:
        logger.error("shell command outlived its kill pid=%s", process.pid)


def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill bwrap's process group; --die-with-parent takes the sandbox with it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
