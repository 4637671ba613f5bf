"""DjangoArtifactService behaves as ADK's InMemoryArtifactService: the same scenarios on both."""

import asyncio
import base64

import pytest
from google.adk.artifacts import InMemoryArtifactService, artifact_util
from google.adk.errors.input_validation_error import InputValidationError
from google.genai import types

from agents.adk.artifacts import DjangoArtifactService, artifact_storage
from agents.models import Artifact

pytestmark = pytest.mark.django_db(transaction=True)

APP, USER, SESSION = "app", "u1", "s1"


@pytest.fixture(autouse=True)
def artifact_storage_dir(settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "artifacts": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "artifacts")},
        },
    }
    return tmp_path / "artifacts"


@pytest.fixture(params=["in_memory", "django"])
def service(request):
    if request.param == "in_memory":
        return InMemoryArtifactService()
    return DjangoArtifactService()


def text(value: str) -> types.Part:
    return types.Part(text=value)


def blob(data: bytes, mime_type: str = "application/octet-stream") -> types.Part:
    return types.Part(inline_data=types.Blob(mime_type=mime_type, data=data))


async def save(service, filename: str, part, **scope) -> int:
    where = {"app_name": APP, "user_id": USER, "session_id": SESSION, **scope}
    return await service.save_artifact(filename=filename, artifact=part, **where)


async def load(service, filename: str, **scope) -> types.Part | None:
    where = {"app_name": APP, "user_id": USER, "session_id": SESSION, **scope}
    return await service.load_artifact(filename=filename, **where)


async def keys(service, **scope) -> list[str]:
    where = {"app_name": APP, "user_id": USER, "session_id": SESSION, **scope}
    return await service.list_artifact_keys(**where)


async def versions(service, filename: str, **scope) -> list[int]:
    where = {"app_name": APP, "user_id": USER, "session_id": SESSION, **scope}
    return await service.list_versions(filename=filename, **where)


async def test_versions_count_from_zero_and_load_takes_the_latest(service):
    saved = [await save(service, "report.txt", text(f"v{i}")) for i in range(3)]

    assert saved == [0, 1, 2]
    assert await load(service, "report.txt") == text("v2")
    assert await load(service, "report.txt", version=0) == text("v0")
    assert await load(service, "report.txt", version=3) is None
    assert await load(service, "report.txt", version=-1) is None
    assert await load(service, "missing.txt") is None
    assert await versions(service, "report.txt") == [0, 1, 2]


async def test_user_artifacts_are_shared_by_one_users_sessions_only(service):
    await save(service, "user:profile.json", text("{}"))

    assert await load(service, "user:profile.json", session_id="s2") == text("{}")
    assert await load(service, "user:profile.json", session_id=None) == text("{}")
    assert await keys(service, session_id="s2") == ["user:profile.json"]
    assert await keys(service, session_id=None) == ["user:profile.json"]
    assert await load(service, "user:profile.json", user_id="u2") is None
    assert await load(service, "user:profile.json", app_name="other") is None
    assert await keys(service, user_id="u2") == []


async def test_session_keys_include_the_users_keys_sorted(service):
    await save(service, "b.txt", text("b"))
    await save(service, "a.txt", text("a"))
    await save(service, "a.txt", text("a2"))
    await save(service, "c.txt", text("c"), session_id="s2")
    await save(service, "user:z.txt", text("z"))

    assert await keys(service) == ["a.txt", "b.txt", "user:z.txt"]
    assert await keys(service, session_id="s2") == ["c.txt", "user:z.txt"]
    assert await keys(service, session_id=None) == ["user:z.txt"]


async def test_session_artifacts_need_a_session(service):
    with pytest.raises(InputValidationError):
        await save(service, "report.txt", text("x"), session_id=None)
    with pytest.raises(InputValidationError):
        await load(service, "report.txt", session_id=None)
    with pytest.raises(InputValidationError):
        await versions(service, "report.txt", session_id=None)


@pytest.mark.parametrize(
    "scope",
    [{"user_id": "../x"}, {"session_id": "user"}, {"app_name": "/abs"}],
    ids=["traversal", "reserved-session", "absolute"],
)
async def test_unsafe_ids_are_refused(service, scope):
    with pytest.raises(InputValidationError):
        await save(service, "report.txt", text("x"), **scope)


async def test_inline_bytes_keep_their_mime_type_and_metadata(service):
    image = blob(b"\x89PNG\r\n\x1a\n\x00\x01", "image/png")

    await save(service, "chart.png", image)
    await service.save_artifact(
        app_name=APP,
        user_id=USER,
        session_id=SESSION,
        filename="chart.png",
        artifact=blob(b"GIF89a", "image/gif"),
        custom_metadata={"source": "upload"},
    )

    assert await load(service, "chart.png", version=0) == image
    found = await service.list_artifact_versions(
        app_name=APP, user_id=USER, session_id=SESSION, filename="chart.png"
    )
    assert [(v.version, v.mime_type, v.custom_metadata) for v in found] == [
        (0, "image/png", {}),
        (1, "image/gif", {"source": "upload"}),
    ]
    latest = await service.get_artifact_version(
        app_name=APP, user_id=USER, session_id=SESSION, filename="chart.png"
    )
    assert (latest.version, latest.mime_type) == (1, "image/gif")
    assert latest.canonical_uri
    assert (
        await service.get_artifact_version(
            app_name=APP,
            user_id=USER,
            session_id=SESSION,
            filename="chart.png",
            version=7,
        )
        is None
    )


async def test_text_is_stored_as_text_plain(service):
    await save(service, "note.txt", text("héllo\nworld"))

    assert await load(service, "note.txt") == text("héllo\nworld")
    version = await service.get_artifact_version(
        app_name=APP, user_id=USER, session_id=SESSION, filename="note.txt"
    )
    assert version.mime_type == "text/plain"


async def test_dict_artifacts_are_normalized_to_parts(service):
    encoded = base64.b64encode(b"a,b\n1,2").decode()

    await save(
        service, "t.csv", {"inlineData": {"mimeType": "text/csv", "data": encoded}}
    )

    assert await load(service, "t.csv") == blob(b"a,b\n1,2", "text/csv")


async def test_file_data_is_kept_as_a_reference(service):
    remote = types.Part(
        file_data=types.FileData(
            file_uri="gs://bucket/x.pdf", mime_type="application/pdf"
        )
    )

    await save(service, "x.pdf", remote)

    assert await load(service, "x.pdf") == remote


async def test_an_artifact_reference_loads_its_target(service):
    await save(service, "data.csv", blob(b"1,2", "text/csv"))
    target = artifact_util.get_artifact_uri(
        app_name=APP, user_id=USER, filename="data.csv", version=0, session_id=SESSION
    )

    await save(
        service, "alias.csv", types.Part(file_data=types.FileData(file_uri=target))
    )

    assert await load(service, "alias.csv") == blob(b"1,2", "text/csv")


async def test_a_reference_out_of_scope_is_refused(service):
    elsewhere = artifact_util.get_artifact_uri(
        app_name=APP, user_id=USER, filename="data.csv", version=0, session_id="s2"
    )

    with pytest.raises(InputValidationError):
        await save(
            service,
            "alias.csv",
            types.Part(file_data=types.FileData(file_uri=elsewhere)),
        )


async def test_a_part_without_content_is_refused(service):
    with pytest.raises(InputValidationError):
        await save(
            service, "call.json", types.Part(function_call=types.FunctionCall(name="f"))
        )


async def test_a_rewind_tombstone_loads_as_nothing(service):
    await save(service, "gone.txt", text("here"))

    await save(service, "gone.txt", artifact_util._new_rewind_tombstone())

    assert await load(service, "gone.txt") is None
    assert await load(service, "gone.txt", version=0) == text("here")
    assert await versions(service, "gone.txt") == [0, 1]


async def test_delete_removes_every_version_and_numbering_restarts(service):
    await save(service, "draft.txt", text("one"))
    await save(service, "draft.txt", text("two"))

    await service.delete_artifact(
        app_name=APP, user_id=USER, session_id=SESSION, filename="draft.txt"
    )

    assert await load(service, "draft.txt") is None
    assert await versions(service, "draft.txt") == []
    assert await keys(service) == []
    assert await save(service, "draft.txt", text("three")) == 0
    await service.delete_artifact(
        app_name=APP, user_id=USER, session_id=SESSION, filename="never.txt"
    )


async def test_loaded_parts_and_metadata_are_copies(service):
    metadata = {"tags": ["a"]}
    await service.save_artifact(
        app_name=APP,
        user_id=USER,
        session_id=SESSION,
        filename="doc.txt",
        artifact=text("original"),
        custom_metadata=metadata,
    )
    metadata["tags"].append("b")

    loaded = await load(service, "doc.txt")
    loaded.text = "changed"

    assert await load(service, "doc.txt") == text("original")
    version = await service.get_artifact_version(
        app_name=APP, user_id=USER, session_id=SESSION, filename="doc.txt"
    )
    assert version.custom_metadata == {"tags": ["a"]}


async def test_concurrent_saves_get_distinct_versions(service):
    saved = await asyncio.gather(
        *(save(service, "log.txt", text(str(i))) for i in range(5))
    )

    assert sorted(saved) == [0, 1, 2, 3, 4]
    assert await versions(service, "log.txt") == [0, 1, 2, 3, 4]


async def test_content_is_in_storage_with_its_size_and_mime_type(artifact_storage_dir):
    service = DjangoArtifactService()

    await save(service, "data.bin", blob(b"\x00\x01\x02", "application/x-thing"))

    row = await Artifact.objects.aget(filename="data.bin")
    assert (row.size, row.mime_type, row.session_key) == (
        3,
        "application/x-thing",
        SESSION,
    )
    assert "data.bin" not in row.storage_path
    assert (artifact_storage_dir / row.storage_path).read_bytes() == b"\x00\x01\x02"


async def test_delete_removes_the_stored_files():
    service = DjangoArtifactService()
    await save(service, "a.txt", text("1"))
    await save(service, "a.txt", text("2"))
    paths = [row.storage_path async for row in Artifact.objects.all()]

    await service.delete_artifact(
        app_name=APP, user_id=USER, session_id=SESSION, filename="a.txt"
    )

    assert not any(artifact_storage().exists(path) for path in paths)
