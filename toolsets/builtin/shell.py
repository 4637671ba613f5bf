"""The shell toolset: run an allowlisted command, without a shell.

Policy (Django settings, read on every call):
- TOOLCRIB_BUILTIN_SHELL_COMMANDS: the commands that may run, as names found on
  TOOLCRIB_BUILTIN_SHELL_PATH (`ls`) or absolute paths (`/usr/bin/ls`); empty, the
  default, refuses everything.
- TOOLCRIB_BUILTIN_SHELL_TIMEOUT: seconds before the command is killed.
- TOOLCRIB_BUILTIN_SHELL_MAX_OUTPUT: bytes of output (stdout and stderr together)
  before the command is killed and the call refused.
- TOOLCRIB_BUILTIN_SHELL_WORKDIR: the folder commands run in.

The program gets its arguments as a list (no shell parses them), a minimal
environment (none of Toolcrib's variables or secrets), no standard input, and its
own process group, killed whole on timeout or oversized output. Arguments with
shell metacharacters or quotes are refused, so a model that meant a pipeline or
a glob learns it got none, and so are arguments that name paths outside the
working folder (absolute, `~` or `..`).

The catalog row of this toolset starts disabled (`catalog_defaults`): an
administrator enables it and lists the commands. Allowing a command grants what
that command can do: prefer read-only, single-purpose ones.
"""

import asyncio
import os
import re
import shutil
import signal
from pathlib import Path
from typing import Any

from django.conf import settings

from toolsets.builtin.base import BuiltinTool, BuiltinToolset, Refusal

METACHARACTERS = frozenset(";&|$`<>(){}[]*?!~#\\'\"")
MAX_ARGS = 100
MAX_ARG_CHARS = 4096
READ_CHUNK = 65536


class CommandRefused(Refusal):
    """A command or argument that may not run."""


def resolve_command(command: Any) -> str:
    """The executable an allowed command names, or CommandRefused."""
    if not isinstance(command, str) or not command:
        raise CommandRefused("command must be the name of an allowed program")
    _check_characters(command, "command")
    allowed = list(settings.TOOLCRIB_BUILTIN_SHELL_COMMANDS)
    if not allowed:
        raise CommandRefused("no commands are allowed on this server")
    if command not in allowed:
        raise CommandRefused(
            f"{command!r} is not an allowed command; allowed: {', '.join(allowed)}"
        )
    if "/" in command:
        path = (
            command if os.path.isabs(command) and os.access(command, os.X_OK) else None
        )
    else:
        path = shutil.which(command, path=settings.TOOLCRIB_BUILTIN_SHELL_PATH)
    if path is None:
        raise CommandRefused(f"{command!r} is allowed but not installed")
    return path


def checked_args(args: Any) -> list[str]:
    """The arguments, each checked: text, no metacharacters, no outside paths."""
    if args is None:
        return []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise CommandRefused("args must be a list of strings")
    if len(args) > MAX_ARGS:
        raise CommandRefused(f"more than {MAX_ARGS} arguments")
    for arg in args:
        if len(arg) > MAX_ARG_CHARS:
            raise CommandRefused(f"an argument is longer than {MAX_ARG_CHARS}")
        _check_characters(arg, "argument")
        if _leaves_workdir(arg):
            raise CommandRefused(
                f"argument {arg!r} names a path outside the working folder"
            )
    return list(args)


def _leaves_workdir(arg: str) -> bool:
    """An absolute path (maybe after `--option=`) or a `..` step."""
    absolute = any(value.startswith("/") for value in arg.split("="))
    return absolute or ".." in re.split(r"[/=]", arg)


def _check_characters(value: str, what: str) -> None:
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise CommandRefused(f"the {what} {value!r} contains a control character")
    found = sorted(set(value) & METACHARACTERS)
    if found:
        raise CommandRefused(
            f"the {what} {value!r} contains shell metacharacters {''.join(found)!r}: "
            "no shell runs here, so pipes, redirects, globs, variables and quotes "
            "do not work; pass each argument as it is"
        )


def workdir() -> Path:
    folder = Path(settings.TOOLCRIB_BUILTIN_SHELL_WORKDIR)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def environment(folder: Path) -> dict[str, str]:
    """The whole environment a command sees."""
    return {
        "PATH": settings.TOOLCRIB_BUILTIN_SHELL_PATH,
        "HOME": str(folder),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }


async def run_command(command: str, args: list[str] | None = None) -> dict:
    """Run an allowed command with arguments, without a shell.

    No pipes, redirects, globs, variables or quotes: each argument is passed to
    the program exactly as given. Commands run in a working folder, with a time
    limit and an output limit.

    Args:
        command: The program, e.g. "ls"; it must be on the administrator's list.
        args: Its arguments, one per item, e.g. ["-l", "reports"].

    Returns:
        The exit code and the output (stdout and stderr together).
    """
    path = resolve_command(command)
    argv = checked_args(args)
    folder = workdir()
    process = await asyncio.create_subprocess_exec(
        path,
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=folder,
        env=environment(folder),
        start_new_session=True,
    )
    output = await _finish(process)
    return {
        "status": "success",
        "command": command,
        "args": argv,
        "exit_code": process.returncode,
        "output": output.decode("utf-8", errors="replace"),
    }


async def _finish(process: asyncio.subprocess.Process) -> bytes:
    """The output of a process that ends in time and within the output limit."""
    timeout = float(settings.TOOLCRIB_BUILTIN_SHELL_TIMEOUT)
    limit = int(settings.TOOLCRIB_BUILTIN_SHELL_MAX_OUTPUT)
    try:
        async with asyncio.timeout(timeout):
            output = await _read(process, limit)
            await process.wait()
            return output
    except TimeoutError as exc:
        raise Refusal(f"the command ran longer than {timeout} seconds") from exc
    finally:
        if process.returncode is None:
            _kill(process)
            await process.wait()


async def _read(process: asyncio.subprocess.Process, limit: int) -> bytes:
    output = bytearray()
    if process.stdout is None:
        return b""
    while chunk := await process.stdout.read(READ_CHUNK):
        output += chunk
        if len(output) > limit:
            raise Refusal(f"the command's output exceeded {limit} bytes")
    return bytes(output)


def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill the command and everything it started."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class ShellToolset(BuiltinToolset):
    """Run commands from an administrator's allowlist, without a shell."""

    # What a new catalog row for this toolset starts with.
    catalog_defaults = {"enabled": False, "default_policy": "granted_only"}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__([BuiltinTool(run_command, risk="dangerous")], **kwargs)


toolset = ShellToolset()
