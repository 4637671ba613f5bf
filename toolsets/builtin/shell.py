"""The shell toolset: run an allowlisted command, without a shell, in a sandbox.

Policy (Django settings, read on every call; docs/builtin-tools.md#shell):
- TOOLCRIB_BUILTIN_SHELL_COMMANDS: the commands that may run, as names found on
  TOOLCRIB_BUILTIN_SHELL_PATH (`ls`) or absolute paths (`/usr/bin/ls`); empty, the
  default, refuses everything. A command must live under /usr (all the sandbox
  shows of the host's programs).
- TOOLCRIB_BUILTIN_SHELL_TIMEOUT: seconds before the command is killed.
- TOOLCRIB_BUILTIN_SHELL_MAX_OUTPUT: bytes of output (stdout and stderr together)
  before the command is killed and the call refused.
- TOOLCRIB_BUILTIN_SHELL_WORKDIR: the folder that holds one working folder per
  user. It must not be inside (or around) the data folder, the media folder or the
  project: a call refuses to run otherwise.
- TOOLCRIB_BUILTIN_SHELL_QUOTA_MB: how much disk a user's working folder may
  hold; a command that reaches it is stopped and what it wrote undone (quota.py).
- The sandbox's own settings (bwrap, user, resource limits): see sandbox.py.

Two layers. The first is a string check: the program gets its arguments as a list
(no shell parses them), and arguments with shell metacharacters, quotes or a path
that leaves the working folder (absolute, `..`, also glued to a short option like
`-f/etc/x` or after `=`, `:`, `,`, `@`) are refused, so a model that meant a
pipeline learns it got none. No list of patterns knows every program's option
syntax, so the second layer is the one that holds: the command runs in a
bubblewrap sandbox (sandbox.py) that sees only the user's own folder, /usr and a
private /tmp, as a user without rights, with no network and resource limits. With
no working sandbox on the machine, every call is refused and `manage.py check`
warns.

The catalog row of this toolset starts disabled (`catalog_defaults`): an
administrator enables it and lists the commands. Allowing a command grants what
that command can do inside the sandbox: prefer read-only, single-purpose ones.
"""

import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core import checks
from google.adk.tools import ToolContext

from toolsets.builtin import quota, sandbox
from toolsets.builtin.base import BuiltinTool, BuiltinToolset, kept_folder
from toolsets.refusals import Refusal

METACHARACTERS = frozenset(";&|$`<>(){}[]*?!~#\\'\"")
MAX_ARGS = 100
MAX_ARG_CHARS = 4096
# Where a path value can start: the argument itself, after `=`, `:`, `,` or `@`
# (`--file=/x`, `file:///x`, `host:/x`, `@/x`), or after a short option's letters
# (`-f/x`, `-xzC..`).
_VALUE_START = r"(?:^-[A-Za-z0-9]*|^|[=:,@])"
OUTSIDE = re.compile(rf"{_VALUE_START}/|(?:{_VALUE_START}|/)\.\.(?:$|[/=:,@])")
SAFE_USER_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


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
    path = _installed(command)
    if path is None:
        raise CommandRefused(f"{command!r} is allowed but not installed")
    real = os.path.realpath(path)
    if not sandbox.is_visible(real):
        raise CommandRefused(
            f"{command!r} is installed at {real}, outside /usr: the sandbox cannot "
            "see it"
        )
    return path


def _installed(command: str) -> str | None:
    if "/" not in command:
        return shutil.which(command, path=settings.TOOLCRIB_BUILTIN_SHELL_PATH)
    if os.path.isabs(command) and os.access(command, os.X_OK):
        return command
    return None


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
        if OUTSIDE.search(arg):
            raise CommandRefused(
                f"argument {arg!r} names a path outside the working folder"
            )
    return list(args)


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


def user_workdir(user_id: str) -> Path:
    """The user's own working folder, created, owned by the sandbox's user."""
    root = _workdir_root()
    folder = root / _folder_name(user_id)
    sandbox.prepare_folder(folder)
    return folder


def _workdir_root() -> Path:
    root = Path(settings.TOOLCRIB_BUILTIN_SHELL_WORKDIR).resolve()
    problem = workdir_problem(root)
    if problem is not None:
        raise CommandRefused(problem)
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = root.stat()
    if info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise CommandRefused(
            f"the shell's working folder {root} must belong to the server and be "
            "writable by nobody else"
        )
    return root


def workdir_problem(root: Path) -> str | None:
    """Why a working folder may not hold the users' folders, or None."""
    found = kept_folder(root)
    if found is None:
        return None
    name, kept = found
    return (
        f"the shell's working folder {root} must not be inside {name} "
        f"({kept}), nor hold it: set TOOLCRIB_BUILTIN_SHELL_WORKDIR to a "
        "folder of its own"
    )


def _folder_name(user_id: str) -> str:
    if SAFE_USER_ID.fullmatch(user_id):
        return f"user-{user_id}"
    return "hashed-" + hashlib.sha256(user_id.encode()).hexdigest()[:32]


async def run_command(
    command: str, tool_context: ToolContext, args: list[str] | None = None
) -> dict:
    """Run an allowed command with arguments, without a shell.

    No pipes, redirects, globs, variables or quotes: each argument is passed to
    the program exactly as given. Commands run in your own working folder (and
    see nothing else but the system's programs and a private /tmp), with no
    network, a time limit, an output limit and a disk quota for the folder.

    Args:
        command: The program, e.g. "ls"; it must be on the administrator's list.
        args: Its arguments, one per item, e.g. ["-l", "reports"]; paths are
            relative to the working folder.

    Returns:
        The exit code and the output (stdout and stderr together).
    """
    path = resolve_command(command)
    argv = checked_args(args)
    folder = user_workdir(tool_context.user_id)
    completed = await quota.run_within_quota(path, argv, folder)
    return {
        "status": "success",
        "command": command,
        "args": argv,
        "exit_code": completed.exit_code,
        "output": completed.output.decode("utf-8", errors="replace"),
    }


def check_shell_toolset(app_configs: Any = None, **kwargs: Any) -> list[Any]:
    """System check: a configured shell toolset has a sandbox and a safe folder."""
    configured = "toolsets.builtin.shell.toolset" in settings.TOOLCRIB_TOOLSETS.values()
    if not configured or not settings.TOOLCRIB_BUILTIN_SHELL_COMMANDS:
        return []
    root = Path(settings.TOOLCRIB_BUILTIN_SHELL_WORKDIR).resolve()
    problems = [sandbox.sandbox_problem(), workdir_problem(root)]
    return [
        checks.Warning(
            f"The shell toolset refuses every command: {problem}",
            hint="See docs/builtin-tools.md, section shell.",
            id="toolsets.W001",
        )
        for problem in problems
        if problem is not None
    ]


class ShellToolset(BuiltinToolset):
    """Run commands from an administrator's allowlist, without a shell, sandboxed."""

    # What a new catalog row for this toolset starts with.
    catalog_defaults = {"enabled": False, "default_policy": "granted_only"}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__([BuiltinTool(run_command, risk="dangerous")], **kwargs)


toolset = ShellToolset()
