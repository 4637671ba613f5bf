"""The shell tool cannot reach what is not its own working folder (issue 14, High 1).

With tar, grep, date or sort allowed, short options with a glued value
(`tar -C..`, `date -f/etc/hostname`, `sort -o/x`) walked past the argument check:
the working folder sat inside the data folder, so a user copied the SQLite
database into a tarball and grepped the admin's API token out of it.

Two layers, tested apart: the argument check refuses the glued and prefixed forms,
and the sandbox (`run_sandboxed`, called here with arguments the check would have
refused, in a folder inside the data folder as the old layout had it) stops them
all by itself, and every other way a program takes a path.
"""

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core import checks

from tests.toolsets.builtin.adk import call_tool, call_tools
from tests.toolsets.builtin.sandboxes import require_sandbox
from toolsets.builtin import sandbox
from toolsets.builtin.shell import (
    CommandRefused,
    check_shell_toolset,
    checked_args,
    toolset,
)

SECRET = "tok3n-of-the-admin-5f1c9a"
UPLOADED = "bobs-upload-8d2e4b"
SYSTEM_ROOT = {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr"}
PROGRAMS = ["tar", "grep", "date", "sort", "cat", "curl", "ls", "touch"]


@pytest.fixture
def sandboxed() -> None:
    require_sandbox()


@pytest.fixture
def data_dir(settings, tmp_path) -> Path:
    """A data folder laid out like the real one: database, uploads, shell folder."""
    data = tmp_path / "var"
    (data / "media" / "uploads").mkdir(parents=True)
    with sqlite3.connect(data / "toolcrib.sqlite3") as db:
        db.execute("CREATE TABLE authtoken_token (key TEXT, user_id INT)")
        db.execute("INSERT INTO authtoken_token VALUES (?, 1)", [SECRET])
    (data / "media" / "uploads" / "bob.txt").write_text(UPLOADED)
    (data / "secret.txt").write_text(SECRET)
    settings.DATA_DIR = data
    settings.MEDIA_ROOT = data / "media"
    settings.TOOLCRIB_BUILTIN_SHELL_COMMANDS = PROGRAMS
    settings.TOOLCRIB_BUILTIN_SHELL_TIMEOUT = 10
    return data


@pytest.fixture
def outside(settings, tmp_path, data_dir, sandboxed) -> Path:
    """The shell's folder beside the data folder, not in it."""
    settings.TOOLCRIB_BUILTIN_SHELL_WORKDIR = str(tmp_path / "shell")
    return tmp_path


def outputs(responses: list[dict]) -> str:
    """What the commands printed, and any refusal."""
    return "\n".join(
        r.get("output", "") + r.get("error_message", "") for r in responses
    )


# The first line: the argument check. Each of these passed it before.
@pytest.mark.parametrize(
    "arg",
    [
        "-C..",
        "-f/etc/hostname",
        "-o/x",
        "-xf/x",
        "-C../var",
        "@/etc/hostname",
        "file:///etc/hostname",
        "host:/etc/hostname",
        "--files0-from,/etc/hostname",
    ],
)
def test_glued_and_prefixed_paths_are_refused_by_the_argument_check(arg):
    with pytest.raises(CommandRefused, match="outside the working folder"):
        checked_args([arg])


@pytest.mark.parametrize(
    "arg", ["-la", "notes/today.md", "--lines=5", "-n3", "a..b", "x=1", "-ofile.txt"]
)
def test_ordinary_arguments_still_pass_the_argument_check(arg):
    assert checked_args([arg]) == [arg]


# The attacks through the tool, as a user would send them.
async def test_tar_and_grep_cannot_read_the_database_from_the_old_shell_folder(
    settings, data_dir, sandboxed
):
    settings.TOOLCRIB_BUILTIN_SHELL_WORKDIR = str(data_dir / "shell")
    responses = await call_tools(
        [toolset],
        [
            (
                "run_command",
                {
                    "command": "tar",
                    "args": ["-cf", "db.tar", "-C..", "toolcrib.sqlite3"],
                },
            ),
            (
                "run_command",
                {"command": "grep", "args": ["-a", "-o", SECRET, "db.tar"]},
            ),
        ],
    )
    assert SECRET not in outputs(responses)
    assert not (data_dir / "shell" / "db.tar").exists()


@pytest.mark.parametrize("inside", ["DATA_DIR", "MEDIA_ROOT", "BASE_DIR"])
async def test_a_working_folder_inside_the_data_media_or_project_folder_is_refused(
    settings, data_dir, inside
):
    settings.TOOLCRIB_BUILTIN_SHELL_WORKDIR = str(
        Path(getattr(settings, inside)) / "sh"
    )
    response = await call_tool([toolset], "run_command", command="ls", args=[])
    assert response["status"] == "error"
    assert "must not be inside" in response["error_message"]


async def test_tar_with_a_glued_parent_cannot_reach_the_data_folder_beside_it(
    outside, data_dir
):
    responses = await call_tools(
        [toolset],
        [
            (
                "run_command",
                {
                    "command": "tar",
                    "args": ["-cf", "db.tar", "-C../var", "toolcrib.sqlite3"],
                },
            ),
            (
                "run_command",
                {"command": "grep", "args": ["-a", "-o", SECRET, "db.tar"]},
            ),
        ],
    )
    assert SECRET not in outputs(responses)


async def test_date_cannot_read_a_file_through_a_glued_option(outside):
    response = await call_tool(
        [toolset], "run_command", command="date", args=["-f/etc/hostname"]
    )
    assert "invalid date" not in outputs([response])


async def test_sort_cannot_write_outside_through_a_glued_option(outside):
    target = outside / "written-by-sort"
    response = await call_tool(
        [toolset], "run_command", command="sort", args=[f"-o{target}", "-"]
    )
    assert response["status"] == "error"
    assert not target.exists()


async def test_curl_cannot_read_a_file_url(outside, data_dir):
    upload = data_dir / "media" / "uploads" / "bob.txt"
    response = await call_tool(
        [toolset], "run_command", command="curl", args=[f"file://{upload}"]
    )
    assert UPLOADED not in outputs([response])


async def test_one_users_shell_cannot_see_another_users_files(outside):
    written = await call_tool(
        [toolset], "run_command", user_id="alice", command="touch", args=["diary.txt"]
    )
    mine = await call_tool([toolset], "run_command", user_id="alice", command="ls")
    theirs = await call_tool([toolset], "run_command", user_id="bob", command="ls")
    assert (written["exit_code"], mine["output"]) == (0, "diary.txt\n")
    assert (theirs["exit_code"], theirs["output"]) == (0, "")


async def test_without_bubblewrap_every_call_is_refused_and_the_check_warns(
    outside, settings
):
    settings.TOOLCRIB_BUILTIN_SHELL_BWRAP = "/nonexistent/bwrap"
    response = await call_tool([toolset], "run_command", command="ls")
    [warning] = check_shell_toolset()
    refusal = response["error_message"]
    assert refusal.startswith("the shell toolset is off: bubblewrap")
    assert "('/nonexistent/bwrap') is not installed" in refusal
    assert (warning.id, warning.level) == ("toolsets.W001", checks.WARNING)


async def test_a_sandbox_that_fails_its_probe_refuses_every_call(outside, settings):
    settings.TOOLCRIB_BUILTIN_SHELL_BWRAP = "/usr/bin/false"
    response = await call_tool([toolset], "run_command", command="ls")
    assert "failed its probe" in response["error_message"]


# The real defence: the sandbox alone, with arguments the check would refuse, in a
# folder inside the data folder (the old layout), so only the sandbox stands between.
@pytest.fixture
def folder(data_dir, sandboxed) -> Path:
    folder = data_dir / "shell"
    sandbox.prepare_folder(folder)
    return folder


async def run(folder: Path, *argv: str) -> str:
    """Run in the sandbox; the exit code and what it printed."""
    done = await sandbox.run_sandboxed(argv[0], argv[1:], folder)
    return f"exit {done.exit_code}\n" + done.output.decode(errors="replace")


@pytest.mark.parametrize("directory", ["-C..", "--directory=..", "-C{data}"])
async def test_the_sandbox_alone_stops_tar_and_grep_reading_the_database(
    folder, data_dir, directory
):
    where = directory.replace("{data}", str(data_dir))
    archived = await run(folder, "tar", "-cf", "db.tar", where, "toolcrib.sqlite3")
    found = await run(folder, "grep", "-a", "-o", SECRET, "db.tar")
    assert "No such file or directory" in archived
    assert SECRET not in found


@pytest.mark.parametrize(
    "args",
    [
        ["-f/etc/hostname"],
        ["--file=/etc/hostname"],
        ["-f", "/etc/hostname"],
        ["-f{data}/secret.txt"],
        ["--file={data}/secret.txt"],
        ["-f", "{data}/secret.txt"],
        ["-f../secret.txt"],
    ],
)
async def test_the_sandbox_alone_stops_date_reading_a_file(folder, data_dir, args):
    said = await run(
        folder, "date", *(a.replace("{data}", str(data_dir)) for a in args)
    )
    assert "invalid date" not in said
    assert "No such file or directory" in said


# Each list is one or more commands run in turn; none may print the secret or the
# upload, whatever form the path takes.
READS = {
    "cat an absolute path": [["cat", "{data}/toolcrib.sqlite3"]],
    "cat up the tree": [["cat", "../toolcrib.sqlite3"]],
    "cat another user's upload": [["cat", "{data}/media/uploads/bob.txt"]],
    "grep the whole tree": [
        ["grep", "-r", "-a", "-l", "--exclude-dir=usr", "-e", "tok3n", "/"]
    ],
    "grep with the pattern from a file": [
        ["grep", "-a", "-o", "-f", "{data}/secret.txt", "{data}/toolcrib.sqlite3"]
    ],
    "find -exec": [
        ["find", "{data}", "-name", "secret.txt", "-exec", "cat", "{}", "+"]
    ],
    "cp it in": [["cp", "{data}/secret.txt", "here.txt"], ["cat", "here.txt"]],
    "dd if=": [["dd", "if={data}/secret.txt", "of=here.txt"], ["cat", "here.txt"]],
    "a response file": [["strings", "@response"]],
    "curl file://": [["curl", "-sS", "file://{data}/secret.txt"]],
    "curl -o from a file URL": [
        ["curl", "-sS", "-o", "copy.txt", "file://{data}/secret.txt"],
        ["cat", "copy.txt"],
    ],
    "tar an absolute path": [
        ["tar", "-cf", "x.tar", "--absolute-names", "{data}/secret.txt"],
        ["grep", "-a", "-o", SECRET, "x.tar"],
    ],
    "ln -s to the file": [["ln", "-s", "{data}/secret.txt", "link"], ["cat", "link"]],
    "ln -s up the tree": [["ln", "-s", "..", "up"], ["cat", "up/secret.txt"]],
    "the server's environment": [["cat", "/proc/1/environ"], ["env"]],
}


@pytest.mark.parametrize("steps", READS.values(), ids=READS.keys())
async def test_the_sandbox_alone_shows_nothing_outside_its_folder(
    folder, data_dir, steps, monkeypatch
):
    monkeypatch.setenv("TOOLCRIB_TEST_SECRET", SECRET)
    (folder / "response").write_text(f"{data_dir}/secret.txt\n")
    said = [
        await run(folder, *(a.replace("{data}", str(data_dir)) for a in s))
        for s in steps
    ]
    assert SECRET not in "".join(said)
    assert UPLOADED not in "".join(said)


WRITES = {
    "sort -o glued": ["sort", "-o{target}"],
    "sort -o": ["sort", "-o", "{target}"],
    "tee": ["tee", "{target}"],
    "dd of=": ["dd", "if=/dev/zero", "of={target}", "count=1"],
    "find -fprint": ["find", ".", "-fprint", "{target}"],
    "cp": ["cp", "/usr/bin/true", "{target}"],
    "touch": ["touch", "{target}"],
    "mkdir": ["mkdir", "{target}"],
    "ln -s": ["ln", "-s", "/etc", "{target}"],
}


@pytest.mark.parametrize("target", ["/x", "{outside}/written", "../written"])
@pytest.mark.parametrize("argv", WRITES.values(), ids=WRITES.keys())
async def test_the_sandbox_alone_writes_nothing_outside_its_folder(
    folder, data_dir, tmp_path, argv, target
):
    where = target.format(outside=tmp_path)
    said = await run(folder, *(a.format(target=where) for a in argv))
    assert not said.startswith("exit 0")
    assert not Path("/x").exists()
    assert not (tmp_path / "written").exists()
    assert not (data_dir / "written").exists()


async def test_the_sandbox_alone_sees_no_process_of_the_host(folder):
    host = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)", SECRET]
    )
    try:
        said = await run(folder, "ps", "-eo", "args")
    finally:
        host.kill()
        host.wait()
    assert "ps -eo args" in said
    assert SECRET not in said


async def test_the_sandbox_has_no_network(folder):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        said = await run(folder, "curl", "-sS", f"http://127.0.0.1:{port}/")
        server.settimeout(0.2)
        with pytest.raises(TimeoutError):
            server.accept()
    assert "Failed to connect" in said


async def test_the_sandbox_runs_without_rights(folder):
    who = await run(folder, "id", "-u")
    caps = await run(folder, "grep", "Cap", "/proc/self/status")
    assert who == "exit 0\n65534\n"
    assert "CapEff:\t0000000000000000" in caps
    assert "CapPrm:\t0000000000000000" in caps


async def test_processes_are_limited(folder, settings):
    settings.TOOLCRIB_BUILTIN_SHELL_MAX_PROCESSES = 10
    said = await run(
        folder, "sh", "-c", "for i in $(seq 30); do sleep 2 & done; wait; echo all"
    )
    assert "fork" in said
    assert "all" not in said


async def test_memory_is_limited(folder, settings):
    settings.TOOLCRIB_BUILTIN_SHELL_MAX_MEMORY = 256 * 1024**2
    said = await run(folder, "python3", "-c", "bytearray(512 * 1024**2)")
    assert "MemoryError" in said


async def test_file_size_is_limited(folder, settings):
    settings.TOOLCRIB_BUILTIN_SHELL_MAX_FILE_BYTES = 1024**2
    await run(folder, "dd", "if=/dev/zero", "of=big", "bs=1M", "count=4")
    assert (folder / "big").stat().st_size <= 1024**2


async def test_the_private_tmp_is_limited(folder, settings):
    settings.TOOLCRIB_BUILTIN_SHELL_TMP_BYTES = 1024**2
    said = await run(folder, "dd", "if=/dev/zero", "of=/tmp/big", "bs=1M", "count=4")
    assert "No space left on device" in said


async def test_cpu_time_is_limited(folder, settings):
    settings.TOOLCRIB_BUILTIN_SHELL_MAX_CPU = 1
    started = time.monotonic()
    said = await run(folder, "sh", "-c", "while :; do :; done")
    assert not said.startswith("exit 0")
    assert time.monotonic() - started < 5


async def test_a_timeout_kills_everything_the_command_started(folder, settings):
    settings.TOOLCRIB_BUILTIN_SHELL_TIMEOUT = 0.5
    with pytest.raises(sandbox.Refusal, match="longer than 0.5 seconds"):
        await run(folder, "sh", "-c", "sleep 31.4159 & sleep 31.4159")
    time.sleep(0.3)
    assert (
        "sleep 31.4159"
        not in subprocess.run(
            ["ps", "-eo", "args"], capture_output=True, text=True, check=True
        ).stdout
    )


@pytest.fixture
def nobodys_folder() -> Iterator[Path]:
    """A folder nobody can reach: not under pytest's tmp_path, which is 0700."""
    parent = Path(tempfile.mkdtemp(prefix="toolcrib-nobody-"))
    parent.chmod(0o711)
    folder = parent / "work"
    folder.mkdir()
    os.chown(folder, 65534, 65534)
    yield folder
    shutil.rmtree(parent)


@pytest.mark.skipif(os.geteuid() != 0, reason="as non-root, every test runs this form")
def test_the_unprivileged_sandbox_shows_nothing_outside_its_folder(
    data_dir, nobodys_folder, sandboxed
):
    """The form a server that is not root runs, run here as nobody."""
    argv = sandbox.sandbox_argv(
        str(shutil.which("bwrap")),
        "sh",
        ["-c", f"id -u; cat {data_dir}/secret.txt ../../secret.txt; ls /"],
        nobodys_folder,
        root=False,
    )
    said = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=sandbox.environment(),
        user=65534,
        group=65534,
        extra_groups=[],
        check=False,
    )
    [uid, *root] = said.stdout.split()
    assert uid == "65534"
    assert set(root) <= {*SYSTEM_ROOT, "dev", "etc", "proc", "tmp", "work"}
    assert SECRET not in said.stdout + said.stderr
    assert "No such file or directory" in said.stderr
