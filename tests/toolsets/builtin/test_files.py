import pytest
from google.adk.errors.input_validation_error import InputValidationError
from google.genai import types

from agents.adk.artifacts import DjangoArtifactService
from tests.toolsets.builtin.adk import APP_NAME, call_tool, call_tools, memory_artifacts
from toolsets.builtin.files import PathRefused, toolset, workspace_path

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db


@pytest.fixture
def artifacts():
    return memory_artifacts()


async def test_write_read_list_and_delete_a_file(artifacts):
    responses = await call_tools(
        [toolset],
        [
            ("write_file", {"path": "notes/todo.md", "content": "buy milk"}),
            ("write_file", {"path": "readme.txt", "content": "hi"}),
            ("read_file", {"path": "notes/todo.md"}),
            ("list_files", {}),
            ("list_files", {"folder": "notes"}),
            ("delete_file", {"path": "notes/todo.md"}),
            ("list_files", {}),
        ],
        artifacts=artifacts,
    )
    write, _, read, listed, in_notes, deleted, after = responses
    assert write == {
        "status": "success",
        "path": "notes/todo.md",
        "bytes": 8,
        "version": 0,
    }
    assert read["content"] == "buy milk"
    assert listed["files"] == ["notes/todo.md", "readme.txt"]
    assert in_notes["files"] == ["notes/todo.md"]
    assert deleted["deleted"] is True
    assert after["files"] == ["readme.txt"]


async def test_files_are_artifacts_in_the_users_scope(artifacts):
    await call_tool(
        [toolset], "write_file", path="a.txt", content="one", artifacts=artifacts
    )
    again = await call_tool(
        [toolset], "write_file", path="a.txt", content="two", artifacts=artifacts
    )
    assert again["version"] == 1
    part = await artifacts.load_artifact(
        app_name=APP_NAME, user_id="alice", filename="user:workspace/a.txt"
    )
    assert part.inline_data.data == b"two"


async def test_another_user_sees_none_of_your_files(artifacts):
    await call_tool(
        [toolset], "write_file", path="mine.txt", content="x", artifacts=artifacts
    )
    theirs = await call_tool(
        [toolset], "list_files", user_id="bob", artifacts=artifacts
    )
    assert theirs["files"] == []
    read = await call_tool(
        [toolset], "read_file", path="mine.txt", user_id="bob", artifacts=artifacts
    )
    assert read["status"] == "error"


@pytest.mark.parametrize(
    "path",
    [
        "../secret.txt",
        "notes/../../secret.txt",
        "..",
        "/etc/passwd",
        "~/.ssh/id_rsa",
        "C:\\Windows\\win.ini",
        "notes\\..\\x",
        "c:x",
        "file:///etc/passwd",
        "artifact://apps/other/users/bob/x",
        "user:profile.json",
        "a\0b",
        "a\nb",
        "./x",
        "notes//x",
        "notes/",
        ".env",
        "-rf",
        "x" * 600,
    ],
)
def test_paths_that_could_leave_the_workspace_are_refused(path):
    with pytest.raises(PathRefused):
        workspace_path(path)


@pytest.mark.parametrize("path", ["todo.md", "notes/2024-06 plan.txt", "_x/a+b@c.json"])
def test_plain_relative_paths_are_accepted(path):
    assert workspace_path(path) == path


@pytest.mark.parametrize("tool", ["read_file", "write_file", "delete_file"])
async def test_traversal_is_refused_by_every_tool(artifacts, tool):
    response = await call_tool(
        [toolset], tool, path="../../etc/passwd", content="x", artifacts=artifacts
    )
    assert response["status"] == "error"
    assert "leave the workspace" in response["error_message"]
    assert (
        await artifacts.list_artifact_keys(
            app_name=APP_NAME, user_id="alice", session_id="s1"
        )
        == []
    )


@pytest.mark.parametrize(
    "uri", ["file:///etc/passwd", "https://example.com/x", "gs://bucket/x"]
)
async def test_a_link_out_of_the_artifact_store_is_not_followed(artifacts, uri):
    link = types.Part(file_data=types.FileData(file_uri=uri, mime_type="text/plain"))
    await artifacts.save_artifact(
        app_name=APP_NAME,
        user_id="alice",
        filename="user:workspace/link",
        artifact=link,
    )
    response = await call_tool([toolset], "read_file", path="link", artifacts=artifacts)
    assert response == {
        "status": "error",
        "error_message": f"'link' is a link to {uri}; not followed",
    }


async def test_a_link_into_another_users_artifacts_cannot_be_stored(artifacts):
    """The artifact service keeps artifact:// references in the user's scope."""
    link = types.Part(
        file_data=types.FileData(
            file_uri=f"artifact://apps/{APP_NAME}/users/bob/artifacts/x/versions/0",
            mime_type="text/plain",
        )
    )
    with pytest.raises(InputValidationError):
        await artifacts.save_artifact(
            app_name=APP_NAME,
            user_id="alice",
            filename="user:workspace/link",
            artifact=link,
        )


async def test_an_oversized_file_is_refused(artifacts, settings):
    settings.TOOLCRIB_BUILTIN_FILES_MAX_BYTES = 10
    response = await call_tool(
        [toolset], "write_file", path="big.txt", content="x" * 11, artifacts=artifacts
    )
    assert response == {
        "status": "error",
        "error_message": "the content is larger than 10 bytes",
    }


async def test_the_workspace_holds_at_most_max_files(artifacts, settings):
    settings.TOOLCRIB_BUILTIN_FILES_MAX_FILES = 1
    first, second, overwrite = await call_tools(
        [toolset],
        [
            ("write_file", {"path": "a.txt", "content": "1"}),
            ("write_file", {"path": "b.txt", "content": "2"}),
            ("write_file", {"path": "a.txt", "content": "3"}),
        ],
        artifacts=artifacts,
    )
    assert first["status"] == "success"
    assert "already holds 1 files" in second["error_message"]
    assert overwrite["status"] == "success"


async def test_reading_a_missing_file_is_an_error():
    response = await call_tool(
        [toolset], "read_file", path="nope.txt", artifacts=memory_artifacts()
    )
    assert "no file 'nope.txt'" in response["error_message"]


async def test_without_an_artifact_service_files_are_unavailable():
    response = await call_tool([toolset], "list_files")
    assert response["error_message"] == "files are unavailable: no artifact service"


@pytest.mark.django_db(transaction=True)
async def test_the_workspace_works_on_toolcribs_artifact_service(alice):
    responses = await call_tools(
        [toolset],
        [
            ("write_file", {"path": "notes/todo.md", "content": "buy milk"}),
            ("read_file", {"path": "notes/todo.md"}),
            ("delete_file", {"path": "notes/todo.md"}),
            ("list_files", {}),
        ],
        user_id=str(alice.pk),
        artifacts=DjangoArtifactService(),
    )
    assert [r["status"] for r in responses] == ["success"] * 4
    assert responses[1]["content"] == "buy milk"
    assert responses[3]["files"] == []
