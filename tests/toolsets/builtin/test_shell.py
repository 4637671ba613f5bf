import time

import pytest

from tests.toolsets.builtin.adk import call_tool
from tests.toolsets.builtin.sandboxes import require_sandbox
from toolsets.bindings import catalog_defaults
from toolsets.builtin.shell import (
    CommandRefused,
    checked_args,
    resolve_command,
    toolset,
    user_workdir,
)

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db


@pytest.fixture
def commands(settings, tmp_path):
    require_sandbox()
    settings.TOOLCRIB_BUILTIN_SHELL_COMMANDS = ["echo", "ls", "sleep", "yes", "env"]
    settings.TOOLCRIB_BUILTIN_SHELL_WORKDIR = str(tmp_path / "work")
    settings.TOOLCRIB_BUILTIN_SHELL_TIMEOUT = 5
    settings.TOOLCRIB_BUILTIN_SHELL_MAX_OUTPUT = 4096
    return settings


async def test_runs_an_allowed_command_through_a_runner(commands):
    response = await call_tool(
        [toolset], "run_command", command="echo", args=["hello", "world"]
    )
    assert response == {
        "status": "success",
        "command": "echo",
        "args": ["hello", "world"],
        "exit_code": 0,
        "output": "hello world\n",
    }


async def test_arguments_reach_the_program_unparsed(commands):
    response = await call_tool(
        [toolset], "run_command", command="echo", args=["two  spaces", "a b"]
    )
    assert response["output"] == "two  spaces a b\n"


async def test_commands_run_in_the_users_own_working_folder(commands, tmp_path):
    (user_workdir("alice") / "report.txt").write_text("x")
    response = await call_tool([toolset], "run_command", command="ls", args=[])
    assert response["output"] == "report.txt\n"
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["user-alice"]


def test_a_user_id_that_is_not_a_plain_name_gets_a_hashed_folder(commands):
    folder = user_workdir("../../etc")
    assert folder.parent.name == "work"
    assert folder.name.startswith("hashed-")


async def test_the_command_sees_none_of_toolcribs_environment(commands, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "do-not-leak")
    response = await call_tool([toolset], "run_command", command="env")
    names = {line.split("=", 1)[0] for line in response["output"].splitlines()}
    assert names == {"PATH", "HOME", "LANG", "LC_ALL", "PWD"}
    assert "HOME=/work\n" in response["output"]


async def test_nothing_runs_until_an_admin_lists_commands(settings):
    settings.TOOLCRIB_BUILTIN_SHELL_COMMANDS = []
    response = await call_tool([toolset], "run_command", command="echo", args=["x"])
    assert response["error_message"] == "no commands are allowed on this server"


@pytest.mark.parametrize("command", ["cat", "rm", "/bin/echo", "bash", "echo;id"])
async def test_a_command_off_the_allowlist_is_refused(commands, command):
    response = await call_tool(
        [toolset], "run_command", command=command, args=["/etc/passwd"]
    )
    assert response["status"] == "error"


@pytest.mark.parametrize(
    "arg",
    [
        "hello; rm -rf /",
        "$(id)",
        "`id`",
        "a | b",
        "> out.txt",
        "*.txt",
        "a && b",
        "${HOME}",
        "'quoted'",
        "line\nbreak",
    ],
)
async def test_shell_metacharacters_are_refused(commands, arg):
    response = await call_tool([toolset], "run_command", command="echo", args=[arg])
    assert response["status"] == "error"
    assert (
        "metacharacters" in response["error_message"]
        or "control" in response["error_message"]
    )


@pytest.mark.parametrize(
    "arg",
    ["/etc/passwd", "../secret", "a/../../b", "--file=/etc/x", "-C..", "-f/etc/x"],
)
def test_arguments_naming_paths_outside_the_working_folder_are_refused(commands, arg):
    with pytest.raises(CommandRefused, match="outside the working folder"):
        checked_args([arg])


def test_arguments_must_be_a_list_of_strings(commands):
    with pytest.raises(CommandRefused, match="list of strings"):
        checked_args("-la")


async def test_an_oversized_output_is_refused_and_the_command_killed(commands):
    started = time.monotonic()
    response = await call_tool([toolset], "run_command", command="yes", args=["y"])
    assert response == {
        "status": "error",
        "error_message": "the command's output exceeded 4096 bytes",
    }
    assert time.monotonic() - started < 4


async def test_a_slow_command_is_killed_at_the_timeout(commands):
    commands.TOOLCRIB_BUILTIN_SHELL_TIMEOUT = 0.3
    started = time.monotonic()
    response = await call_tool([toolset], "run_command", command="sleep", args=["5"])
    assert response["error_message"] == "the command ran longer than 0.3 seconds"
    assert time.monotonic() - started < 2


def test_a_command_outside_usr_is_refused_since_the_sandbox_cannot_see_it(
    commands, tmp_path
):
    program = tmp_path / "tool"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    commands.TOOLCRIB_BUILTIN_SHELL_COMMANDS = [str(program)]
    with pytest.raises(CommandRefused, match="outside /usr"):
        resolve_command(str(program))


def test_the_shell_toolset_starts_disabled_and_granted_only():
    assert catalog_defaults(toolset) == {
        "enabled": False,
        "default_policy": "granted_only",
    }
