"""A user's shell working folder holds at most its quota (TOOLCRIB_BUILTIN_SHELL_QUOTA_MB).

Before, nothing bounded it but the size of each file: three calls filled 172 MB.
Now a call that takes the folder to its quota is stopped, what it wrote is undone
and the call refused with a message the model and the user read; a single call
writing far more is stopped at the quota, not refused on the next call. Run in the
real bubblewrap sandbox: through the tool as a turn calls it, and, for what only a
shell can do (many files at once, appending), through the quota with `sh -c`.
"""

import asyncio
import time
from pathlib import Path

import pytest

from tests.toolsets.builtin.adk import call_tool, call_tools
from tests.toolsets.builtin.sandboxes import require_sandbox
from toolsets.builtin import quota
from toolsets.builtin.shell import toolset, user_workdir

MB = 1024**2
QUOTA_MB = 10


@pytest.fixture
def shell(settings, tmp_path) -> Path:
    """A shell with a 10 MB quota, whose file size limit is not what stops a write."""
    require_sandbox()
    settings.DATA_DIR = tmp_path / "var"
    settings.MEDIA_ROOT = tmp_path / "var" / "media"
    settings.TOOLCRIB_BUILTIN_SHELL_WORKDIR = str(tmp_path / "shell")
    settings.TOOLCRIB_BUILTIN_SHELL_COMMANDS = ["fallocate", "rm", "ls", "sh", "cat"]
    settings.TOOLCRIB_BUILTIN_SHELL_TIMEOUT = 10
    settings.TOOLCRIB_BUILTIN_SHELL_QUOTA_MB = QUOTA_MB
    settings.TOOLCRIB_BUILTIN_SHELL_MAX_FILE_BYTES = 4 * 1024**3
    return tmp_path / "shell"


def allocate(size: str, name: str) -> tuple[str, dict]:
    return ("run_command", {"command": "fallocate", "args": ["-l", size, name]})


def used(folder: Path) -> int:
    return quota.scan(folder).used


def names(folder: Path) -> set[str]:
    return {path.name for path in folder.iterdir()}


async def test_three_calls_cannot_fill_more_than_the_quota(shell):
    responses = await call_tools(
        [toolset],
        [allocate("6M", "one"), allocate("6M", "two"), allocate("6M", "three")],
    )

    folder = shell / "user-alice"
    assert [r["status"] for r in responses] == ["success", "error", "error"]
    refusal = responses[1]["error_message"]
    assert refusal.startswith(
        "workspace quota of 10 MB reached: the command was stopped"
    )
    assert "Delete files you no longer need (rm) to make room" in refusal
    assert "one (6.0 MB)" in refusal
    assert names(folder) == {"one"}
    assert used(folder) < QUOTA_MB * MB


async def test_one_call_asking_for_a_gigabyte_is_stopped_at_the_quota(shell):
    started = time.monotonic()
    response = await call_tool(
        [toolset], "run_command", command="fallocate", args=["-l", "1G", "big"]
    )

    assert response["status"] == "error"
    assert "workspace quota of 10 MB reached" in response["error_message"]
    assert names(shell / "user-alice") == set()
    assert time.monotonic() - started < 5


async def test_a_full_workspace_still_runs_rm_and_names_its_largest_files(
    shell, settings
):
    await call_tool(
        [toolset], "run_command", command="fallocate", args=["-l", "6M", "a"]
    )
    settings.TOOLCRIB_BUILTIN_SHELL_QUOTA_MB = 4  # lowered: the folder is over it

    listed = await call_tool([toolset], "run_command", command="ls")
    written = await call_tool(
        [toolset], "run_command", command="fallocate", args=["-l", "1M", "b"]
    )
    removed = await call_tool([toolset], "run_command", command="rm", args=["a"])
    again = await call_tool(
        [toolset], "run_command", command="fallocate", args=["-l", "1M", "b"]
    )

    assert listed["error_message"] == (
        "workspace quota of 4 MB reached (6.0 MB used). Delete files you no longer "
        "need (rm) to make room; the largest: a (6.0 MB)."
    )
    assert "workspace quota of 4 MB reached" in written["error_message"]
    assert (removed["status"], removed["exit_code"]) == ("success", 0)
    assert (again["status"], again["exit_code"]) == ("success", 0)
    assert names(shell / "user-alice") == {"b"}


async def test_each_user_has_a_quota_of_her_own(shell):
    alices = await call_tool(
        [toolset], "run_command", command="fallocate", args=["-l", "6M", "a"]
    )
    bobs = await call_tool(
        [toolset],
        "run_command",
        user_id="bob",
        command="fallocate",
        args=["-l", "6M", "b"],
    )

    assert (alices["status"], bobs["status"]) == ("success", "success")


async def test_two_calls_at_once_cannot_share_out_more_than_the_quota(shell):
    both = await asyncio.gather(
        call_tool(
            [toolset], "run_command", command="fallocate", args=["-l", "6M", "x"]
        ),
        call_tool(
            [toolset], "run_command", command="fallocate", args=["-l", "6M", "y"]
        ),
    )

    assert sorted(r["status"] for r in both) == ["error", "success"]
    assert len(names(shell / "user-alice")) == 1
    assert used(shell / "user-alice") < QUOTA_MB * MB


# What only a shell does: the quota around the sandbox, with arguments the tool's
# check would refuse.
async def sh(folder: Path, script: str) -> str:
    done = await quota.run_within_quota("sh", ["-c", script], folder)
    return done.output.decode()


@pytest.fixture
async def folder(shell) -> Path:
    folder = user_workdir("carol")
    await sh(folder, "echo written before > kept.txt")
    return folder


async def test_many_files_written_at_once_are_stopped_and_removed(folder):
    started = time.monotonic()
    with pytest.raises(quota.QuotaReached, match="the command was stopped") as refused:
        await sh(
            folder,
            "for i in $(seq 1000); do head -c 1048576 /dev/zero > f$i & "
            "[ $((i % 16)) = 0 ] && wait; done; wait",
        )

    assert time.monotonic() - started < 8  # not the 10 s timeout: the quota
    assert "MB left" in str(refused.value)
    assert names(folder) == {"kept.txt"}
    assert (folder / "kept.txt").read_text() == "written before\n"


async def test_a_single_stream_of_a_gigabyte_stops_at_the_quota(folder):
    with pytest.raises(quota.QuotaReached):
        await sh(folder, "head -c 1073741824 /dev/zero > big; mkdir made")

    assert names(folder) == {"kept.txt"}


async def test_a_file_grown_past_the_quota_is_cut_back_to_its_size(folder):
    with pytest.raises(quota.QuotaReached):
        await sh(folder, "head -c 20971520 /dev/zero >> kept.txt")

    assert (folder / "kept.txt").read_text() == "written before\n"


async def test_a_flood_of_empty_files_fills_the_quota_too(folder, settings):
    settings.TOOLCRIB_BUILTIN_SHELL_QUOTA_MB = 1  # 256 entries of 4 KiB

    with pytest.raises(quota.QuotaReached):
        await sh(folder, "mkdir d; cd d; for i in $(seq 5000); do : > e$i; done")

    assert names(folder) == {"kept.txt"}


async def test_what_a_command_writes_within_the_quota_stays(folder):
    said = await sh(folder, "head -c 3145728 /dev/zero > three; echo done")

    assert said == "done\n"
    assert names(folder) == {"kept.txt", "three"}
