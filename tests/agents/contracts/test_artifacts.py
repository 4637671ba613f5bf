"""DjangoArtifactService against ADK's artifact contract (tests/unittests/artifacts).

The behaviours ADK's artifact service suite checks of every service, on ADK's
InMemoryArtifactService and on DjangoArtifactService. The tests of refused
names never reach a database: a name is refused before anything is read.
"""

import time
from collections.abc import Iterator

import pytest
from google.adk.artifacts import BaseArtifactService, InMemoryArtifactService
from google.adk.errors.input_validation_error import InputValidationError
from google.genai import types

from agents.adk.artifacts import DjangoArtifactService
from agents.models import Artifact
from tests.agents.contracts.conftest import BACKENDS, prepare

SCOPE = {"app_name": "app0", "user_id": "user0", "session_id": "123"}


@pytest.fixture(params=BACKENDS)
def service(request) -> Iterator[BaseArtifactService]:
    prepare(request, request.param)
    if request.param == "adk":
        yield InMemoryArtifactService()
    else:
        yield DjangoArtifactService()


def text(value: str) -> types.Part:
    return types.Part.from_text(text=value)


def ref(uri_tail: str) -> types.Part:
    return types.Part(
        file_data=types.FileData(
            file_uri=f"artifact://apps/{uri_tail}", mime_type="text/plain"
        )
    )


async def test_loading_what_was_never_saved_is_none(service):
    assert await service.load_artifact(**SCOPE, filename="nothing") is None


async def test_save_load_and_delete(service):
    artifact = types.Part.from_bytes(data=b"test_data", mime_type="text/plain")

    assert await service.save_artifact(**SCOPE, filename="f", artifact=artifact) == 0
    assert await service.load_artifact(**SCOPE, filename="f") == artifact
    assert await service.load_artifact(**SCOPE, filename="f", version=3) is None
    await service.delete_artifact(**SCOPE, filename="f")
    assert await service.load_artifact(**SCOPE, filename="f") is None


@pytest.mark.parametrize("session_id", ["user", "user/x", "user\\x"])
async def test_saving_under_the_reserved_session_user_is_refused(service, session_id):
    with pytest.raises(InputValidationError, match="reserved value 'user'"):
        await service.save_artifact(
            app_name="app0",
            user_id="user0",
            session_id=session_id,
            filename="report.txt",
            artifact=text("hello"),
        )


@pytest.mark.parametrize("session_id", ["user", "user/x", "user\\x"])
async def test_reads_and_deletes_under_session_user_still_answer(service, session_id):
    scope = {"app_name": "app0", "user_id": "user0", "session_id": session_id}

    assert await service.list_artifact_keys(**scope) == []
    assert await service.load_artifact(**scope, filename="report.txt") is None
    assert await service.list_versions(**scope, filename="report.txt") == []
    await service.delete_artifact(**scope, filename="report.txt")


async def test_keys_are_listed_in_order(service):
    names = [f"filename{i}" for i in range(5)]
    for name in reversed(names):
        await service.save_artifact(**SCOPE, filename=name, artifact=text(name))

    assert await service.list_artifact_keys(**SCOPE) == names


async def test_versions_count_from_zero(service):
    parts = [
        types.Part.from_bytes(data=i.to_bytes(2, "big"), mime_type="text/plain")
        for i in range(3)
    ] + [text("hello")]
    for part in parts:
        await service.save_artifact(**SCOPE, filename="with/slash/name", artifact=part)

    versions = await service.list_versions(**SCOPE, filename="with/slash/name")

    assert versions == [0, 1, 2, 3]
    for version, part in enumerate(parts):
        loaded = await service.load_artifact(
            **SCOPE, filename="with/slash/name", version=version
        )
        assert loaded == part


async def test_a_nested_name_is_another_artifact(service):
    await service.save_artifact(**SCOPE, filename="doc", artifact=text("parent v0"))
    for i in range(3):
        await service.save_artifact(
            **SCOPE, filename="doc/nested", artifact=text(f"nested v{i}")
        )

    assert await service.list_versions(**SCOPE, filename="doc") == [0]
    assert await service.load_artifact(**SCOPE, filename="doc") == text("parent v0")
    versions = await service.list_artifact_versions(**SCOPE, filename="doc")
    assert [v.version for v in versions] == [0]
    next_version = await service.save_artifact(
        **SCOPE, filename="doc", artifact=text("parent v1")
    )
    assert next_version == 1
    assert await service.list_artifact_keys(**SCOPE) == ["doc", "doc/nested"]
    await service.delete_artifact(**SCOPE, filename="doc")
    assert await service.list_versions(**SCOPE, filename="doc/nested") == [0, 1, 2]


async def test_listing_keeps_the_user_prefix_of_user_artifacts(service):
    artifact = types.Part.from_bytes(data=b"data", mime_type="text/plain")
    for name in ["user:document.pdf", "user:image.png", "session_file.txt"]:
        await service.save_artifact(**SCOPE, filename=name, artifact=artifact)

    keys = await service.list_artifact_keys(**SCOPE)
    other_session = await service.list_artifact_keys(
        app_name="app0", user_id="user0", session_id="456"
    )

    assert sorted(keys) == ["session_file.txt", "user:document.pdf", "user:image.png"]
    assert sorted(other_session) == ["user:document.pdf", "user:image.png"]


@pytest.mark.parametrize("filename", ["report", "user:document.pdf"])
async def test_version_metadata_of_every_version(service, filename):
    before = time.time()
    for i in range(4):
        await service.save_artifact(
            **SCOPE,
            filename=filename,
            artifact=types.Part.from_bytes(
                data=i.to_bytes(2, "big"), mime_type="text/plain"
            ),
            custom_metadata={"key": f"value{i}"},
        )
    after = time.time()

    versions = await service.list_artifact_versions(**SCOPE, filename=filename)
    latest = await service.get_artifact_version(**SCOPE, filename=filename)
    second = await service.get_artifact_version(**SCOPE, filename=filename, version=2)

    assert [(v.version, v.custom_metadata, v.mime_type) for v in versions] == [
        (i, {"key": f"value{i}"}, "text/plain") for i in range(4)
    ]
    assert all(before <= v.create_time <= after for v in versions)
    assert len({v.canonical_uri for v in versions}) == 4
    assert (latest, second) == (versions[3], versions[2])


async def test_version_metadata_of_what_is_not_there_is_none(service):
    assert await service.get_artifact_version(**SCOPE, filename="nothing") is None
    await service.save_artifact(**SCOPE, filename="f", artifact=text("v0"))
    assert await service.get_artifact_version(**SCOPE, filename="f", version=3) is None


@pytest.mark.parametrize("user_id", ["group/user123", "mdbuser/username"])
async def test_namespaced_user_ids_and_app_names_work(service, user_id):
    scope = {
        "app_name": "projects/123/locations/us-central1/reasoningEngines/456",
        "user_id": user_id,
        "session_id": "sess123",
    }
    artifact = types.Part.from_bytes(data=b"data", mime_type="text/plain")

    await service.save_artifact(**scope, filename="safe.txt", artifact=artifact)

    assert await service.load_artifact(**scope, filename="safe.txt") == artifact


async def test_a_reference_loads_its_target(service):
    await service.save_artifact(**SCOPE, filename="folder/file456", artifact=text("t"))
    await service.save_artifact(
        **SCOPE,
        filename="reference",
        artifact=ref(
            "app0/users/user0/sessions/123/artifacts/folder/file456/versions/0"
        ),
    )

    assert await service.load_artifact(**SCOPE, filename="reference") == text("t")


async def test_a_reference_may_name_the_users_own_user_artifact(service):
    await service.save_artifact(
        **SCOPE, filename="user:profile.txt", artifact=text("profile")
    )
    other = {**SCOPE, "session_id": "sess1"}
    await service.save_artifact(
        **other,
        filename="ref.txt",
        artifact=ref("app0/users/user0/artifacts/user:profile.txt/versions/0"),
    )

    assert await service.load_artifact(**other, filename="ref.txt") == text("profile")


@pytest.mark.parametrize(
    ("scope", "uri_tail"),
    [
        (
            {"app_name": "app0", "user_id": "attacker", "session_id": "s"},
            "app0/users/victim/artifacts/user:secret.txt/versions/0",
        ),
        (
            {"app_name": "attacker-app", "user_id": "user0", "session_id": "s"},
            "victim-app/users/user0/artifacts/user:secret.txt/versions/0",
        ),
    ],
    ids=["another user", "another app"],
)
async def test_a_reference_out_of_the_app_and_user_is_refused(service, scope, uri_tail):
    with pytest.raises(InputValidationError, match="same app and user scope"):
        await service.save_artifact(**scope, filename="ref.txt", artifact=ref(uri_tail))


async def test_a_reference_into_another_session_is_refused(service):
    with pytest.raises(InputValidationError, match="same session scope"):
        await service.save_artifact(
            **SCOPE,
            filename="ref.txt",
            artifact=ref(
                "app0/users/user0/sessions/other/artifacts/source.txt/versions/0"
            ),
        )


async def test_a_reference_to_itself_stops_at_the_depth_limit(service):
    await service.save_artifact(
        **SCOPE,
        filename="loop.txt",
        artifact=ref("app0/users/user0/sessions/123/artifacts/loop.txt/versions/0"),
    )

    with pytest.raises(InputValidationError, match="maximum recursion depth"):
        await service.load_artifact(**SCOPE, filename="loop.txt")


async def test_an_invalid_reference_uri_is_refused(service):
    with pytest.raises(InputValidationError):
        await service.save_artifact(
            **SCOPE, filename="bad.txt", artifact=ref("app0/invalid")
        )


@pytest.mark.parametrize(
    ("raw", "mime_type"),
    [
        ({"inlineData": {"mimeType": "image/png", "data": "dGVzdA=="}}, "image/png"),
        ({"inline_data": {"mime_type": "text/plain", "data": "aGk="}}, "text/plain"),
    ],
    ids=["camelCase", "snake_case"],
)
async def test_a_dict_is_saved_as_a_part(service, raw, mime_type):
    assert await service.save_artifact(**SCOPE, filename="up", artifact=raw) == 0

    loaded = await service.load_artifact(**SCOPE, filename="up")

    assert loaded.inline_data.mime_type == mime_type


async def test_inline_data_keeps_its_display_name(service):
    artifact = types.Part(
        inline_data=types.Blob(
            mime_type="image/png", data=b"\x89PNG\r\n", display_name="My Report.png"
        )
    )

    await service.save_artifact(**SCOPE, filename="a.bin", artifact=artifact)

    loaded = await service.load_artifact(**SCOPE, filename="a.bin")
    assert loaded.inline_data.display_name == "My Report.png"


@pytest.mark.parametrize("content", ['{"key": "value"}', "some other text"])
async def test_text_stays_text(service, content):
    await service.save_artifact(**SCOPE, filename="data.json", artifact=text(content))

    loaded = await service.load_artifact(**SCOPE, filename="data.json")

    assert (loaded.text, loaded.inline_data) == (content, None)


@pytest.mark.parametrize("filename", ["empty.txt", "user:empty.txt"])
@pytest.mark.parametrize("version", [None, 0])
async def test_empty_text_round_trips(service, filename, version):
    await service.save_artifact(**SCOPE, filename=filename, artifact=text(""))

    loaded = await service.load_artifact(**SCOPE, filename=filename, version=version)

    assert (loaded.text, loaded.inline_data) == ("", None)


@pytest.mark.parametrize("filename", ["empty.bin", "user:empty.bin"])
@pytest.mark.parametrize("version", [None, 0])
async def test_empty_bytes_round_trip(service, filename, version):
    empty = types.Part.from_bytes(data=b"", mime_type="application/pdf")
    await service.save_artifact(**SCOPE, filename=filename, artifact=empty)

    loaded = await service.load_artifact(**SCOPE, filename=filename, version=version)

    assert loaded.inline_data.data == b""


async def test_a_session_artifact_needs_a_session(service):
    with pytest.raises(InputValidationError, match="Session ID must be provided"):
        await service.save_artifact(
            app_name="app0", user_id="user0", filename="f", artifact=text("x")
        )


# Refused names: a value that could leave its scope in any storage layout.

INVALID_SEGMENTS = [
    ("../escape", "must not contain traversal segments"),
    ("../../etc", "must not contain traversal segments"),
    ("foo/../../bar", "must not contain traversal segments"),
    ("..", "must not contain traversal segments"),
    (".", "must not contain traversal segments"),
    ("null\x00byte", "must not contain null bytes"),
    ("", "must not be empty"),
    ("/etc/passwd", "must not be an absolute path or start with a slash"),
    ("\\leading\\backslash", "must not be an absolute path or start with a slash"),
    (r"C:\absolute", "must not be drive-qualified"),
    ("C:/absolute", "must not be drive-qualified"),
    ("C:drive-relative", "must not be drive-qualified"),
    ("victim/sessions/s1", "must not contain reserved path segments"),
    ("victim/artifacts", "must not contain reserved path segments"),
    ("victim/apps", "must not contain reserved path segments"),
    ("victim/users", "must not contain reserved path segments"),
    ("victim/versions", "must not contain reserved path segments"),
]


def _call(service: BaseArtifactService, operation: str, field: str, value: str):
    scope = {"app_name": "myapp", "user_id": "user123", field: value}
    filename = "safe.txt" if field == "session_id" else "user:safe.txt"
    if operation == "save":
        return service.save_artifact(**scope, filename=filename, artifact=text("x"))
    if operation == "load":
        return service.load_artifact(**scope, filename=filename)
    if operation == "delete":
        return service.delete_artifact(**scope, filename=filename)
    return service.list_artifact_keys(**scope)


@pytest.mark.parametrize("operation", ["save", "load", "delete", "list_keys"])
@pytest.mark.parametrize("field", ["app_name", "user_id", "session_id"])
@pytest.mark.parametrize(("value", "match"), INVALID_SEGMENTS)
async def test_a_name_that_could_leave_its_scope_is_refused(
    service, operation, field, value, match
):
    with pytest.raises(InputValidationError, match=match):
        await _call(service, operation, field, value)


@pytest.mark.django_db(transaction=True)
async def test_a_stored_reference_edited_into_another_session_is_refused():
    service = DjangoArtifactService()
    await service.save_artifact(**SCOPE, filename="source.txt", artifact=text("mine"))
    await service.save_artifact(
        **SCOPE,
        filename="ref.txt",
        artifact=ref("app0/users/user0/sessions/123/artifacts/source.txt/versions/0"),
    )
    other = (
        "artifact://apps/app0/users/user0/sessions/456/artifacts/source.txt/versions/0"
    )
    await Artifact.objects.filter(filename="ref.txt").aupdate(
        part={"file_data": {"file_uri": other, "mime_type": "text/plain"}}
    )

    with pytest.raises(InputValidationError, match="same session scope"):
        await service.load_artifact(**SCOPE, filename="ref.txt")
