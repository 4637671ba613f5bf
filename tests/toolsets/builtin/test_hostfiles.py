"""The files tools' host folders (the GoAgent FileOperations' allowedPaths), next to
the per-user workspace: read only, or `:rw`; nothing outside them, by any path."""

import os

import pytest

from tests.toolsets.builtin.adk import call_tool, call_tools, memory_artifacts
from toolsets.builtin.files import toolset

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db


@pytest.fixture
def folders(tmp_path, settings):
    """reports/ (read only, with a nested file), out/ (writable), and a secret."""
    reports, out = tmp_path / "reports", tmp_path / "out"
    (reports / "q3").mkdir(parents=True)
    out.mkdir()
    (reports / "summary.txt").write_text("all good")
    (reports / "q3" / "sales.csv").write_text("region,total\nnorth,7\n")
    (tmp_path / "secret.txt").write_text("do not read")
    settings.TOOLCRIB_BUILTIN_FILES_ALLOWED_PATHS = [str(reports), f"{out}:rw"]
    return tmp_path


async def test_a_read_only_folder_is_listed_and_read(folders):
    reports = folders / "reports"
    listed, read, workspace = await call_tools(
        [toolset],
        [
            ("list_files", {"folder": str(reports)}),
            ("read_file", {"path": f"{reports}/q3/sales.csv"}),
            ("list_files", {}),
        ],
        artifacts=memory_artifacts(),
    )

    assert listed["files"] == [f"{reports}/q3/sales.csv", f"{reports}/summary.txt"]
    assert read["content"] == "region,total\nnorth,7\n"
    assert workspace["files"] == []  # the user's own workspace, as before
    assert workspace["server_folders"] == [
        {"path": str(reports), "writable": False},
        {"path": str(folders / "out"), "writable": True},
    ]


async def test_a_read_only_folder_takes_no_writes(folders):
    reports = folders / "reports"
    wrote, deleted = await call_tools(
        [toolset],
        [
            ("write_file", {"path": f"{reports}/new.txt", "content": "x"}),
            ("delete_file", {"path": f"{reports}/summary.txt"}),
        ],
        artifacts=memory_artifacts(),
    )

    assert "read only" in wrote["error_message"]
    assert "read only" in deleted["error_message"]
    assert sorted(os.listdir(reports)) == ["q3", "summary.txt"]


async def test_a_writable_folder_is_written_read_and_deleted_in(folders):
    out = folders / "out"
    wrote, read, deleted = await call_tools(
        [toolset],
        [
            ("write_file", {"path": f"{out}/notes.md", "content": "hello"}),
            ("read_file", {"path": f"{out}/notes.md"}),
            ("delete_file", {"path": f"{out}/notes.md"}),
        ],
        artifacts=memory_artifacts(),
    )

    assert wrote == {"status": "success", "path": f"{out}/notes.md", "bytes": 5}
    assert read["content"] == "hello"
    assert deleted["deleted"] is True
    assert not (out / "notes.md").exists()


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("{root}/reports/../secret.txt", "'..' part"),
        ("{root}/secret.txt", "outside the folders"),
        ("/etc/hostname", "outside the folders"),
        ("{root}/reports/link.txt", "cannot be read"),  # a link, never followed
        ("{root}/reports/linked/secret.txt", "outside the folders"),
    ],
)
async def test_nothing_outside_the_folders_is_read(folders, path, reason):
    reports = folders / "reports"
    (reports / "link.txt").symlink_to(folders / "secret.txt")
    (reports / "linked").symlink_to(folders)

    response = await call_tool([toolset], "read_file", path=path.format(root=folders))

    assert response["status"] == "error"
    assert reason in response["error_message"]
    assert "do not read" not in str(response)


async def test_a_write_cannot_follow_a_link_out(folders):
    out = folders / "out"
    (out / "trap.txt").symlink_to(folders / "secret.txt")

    response = await call_tool(
        [toolset], "write_file", path=f"{out}/trap.txt", content="overwritten"
    )

    assert response["status"] == "error"
    assert (folders / "secret.txt").read_text() == "do not read"


async def test_without_allowed_folders_an_absolute_path_is_refused(settings):
    settings.TOOLCRIB_BUILTIN_FILES_ALLOWED_PATHS = []

    response = await call_tool([toolset], "read_file", path="/etc/hostname")

    assert "none is allowed" in response["error_message"]


async def test_toolcribs_own_folders_are_never_allowed(settings):
    settings.TOOLCRIB_BUILTIN_FILES_ALLOWED_PATHS = [str(settings.BASE_DIR)]

    response = await call_tool(
        [toolset], "read_file", path=f"{settings.BASE_DIR}/project/settings/base.py"
    )

    assert response["status"] == "error"
    assert "outside the folders" in response["error_message"]
