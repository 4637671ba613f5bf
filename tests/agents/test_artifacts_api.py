"""Artifacts through the API and the socket: upload, list, download, the agent's own saves."""

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator
from django.core.files.uploadedfile import SimpleUploadedFile
from redis.exceptions import RedisError

from agents.adk.artifacts import artifact_storage
from agents.doorbell import streams
from agents.events.wire import EventFrame
from agents.models import Artifact
from agents.tokens import issue_token
from project.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10


@pytest.fixture(autouse=True)
def artifact_storage_dir(settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "artifacts": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "artifacts")},
        },
    }


@pytest.fixture
def upload(api_for):
    def send(user, session: str, content: bytes, filename: str = "notes.txt", **data):
        file = SimpleUploadedFile(filename, content, content_type="text/plain")
        return api_for(user).post(
            f"/api/sessions/{session}/artifacts/",
            {"file": file, **data},
            format="multipart",
        )

    return send


@pytest.fixture
def analyst_session(demo_agents, start_session):
    def make(user) -> str:
        return start_session(user, "document_analyst")

    return make


def test_uploads_are_listed_with_versions_and_download_with_their_type(
    alice, analyst_session, upload, api_for
):
    session = analyst_session(alice)

    first = upload(alice, session, b"version one")
    second = upload(alice, session, b"version two!")

    assert first.status_code == 201, first.content
    assert (first.json()["filename"], first.json()["version"]) == ("notes.txt", 0)
    assert (second.json()["version"], second.json()["size"]) == (1, 12)
    listing = api_for(alice).get(f"/api/sessions/{session}/artifacts/").json()
    assert [(a["filename"], a["scope"], a["latest"]) for a in listing] == [
        ("notes.txt", "session", 1)
    ]
    assert [
        (v["version"], v["mime_type"], v["size"]) for v in listing[0]["versions"]
    ] == [
        (0, "text/plain", 11),
        (1, "text/plain", 12),
    ]
    latest = api_for(alice).get(f"/api/sessions/{session}/artifacts/notes.txt/")
    assert latest.status_code == 200
    assert latest.content == b"version two!"
    assert latest["Content-Type"] == "text/plain"
    assert latest["X-Artifact-Version"] == "1"
    assert latest["X-Content-Type-Options"] == "nosniff"
    assert latest["Content-Disposition"].startswith("attachment;")
    oldest = api_for(alice).get(
        f"/api/sessions/{session}/artifacts/notes.txt/?version=0"
    )
    assert oldest.content == b"version one"


def test_an_upload_is_an_artifact_event_of_the_session(
    alice, analyst_session, upload, events_of
):
    session = analyst_session(alice)

    upload(alice, session, b"hello", filename="hello.txt")

    frames = [f for f in events_of(alice, session) if f["event"]["kind"] == "artifact"]
    assert [(f["event"]["author"], f["event"]["artifact_delta"]) for f in frames] == [
        ("user", {"hello.txt": 0})
    ]


def test_an_upload_is_kept_and_announced_by_seq_when_the_doorbell_fails(
    alice, analyst_session, upload, events_of, monkeypatch
):
    session = analyst_session(alice)

    async def redis_away(**message):
        raise RedisError("Connection refused")

    monkeypatch.setattr(streams, "apublish", redis_away)
    response = upload(alice, session, b"hello", filename="hello.txt")

    assert response.status_code == 201, response.content
    frames = [f for f in events_of(alice, session) if f["event"]["kind"] == "artifact"]
    assert [f["event"]["artifact_delta"] for f in frames] == [{"hello.txt": 0}]


def test_the_agent_loads_an_upload_and_saves_its_analysis(
    alice, analyst_session, upload, say, events_of, api_for
):
    session = analyst_session(alice)
    upload(alice, session, b"Revenue grew 10%.\nCosts fell.\n", filename="report.txt")

    run = say(alice, session, 'analyze "report.txt" for "revenue"')

    assert run["status"] == "succeeded"
    responses = [
        f["event"]
        for f in events_of(alice, session)
        if f["event"]["kind"] == "function_response"
    ]
    result = responses[0]["function_responses"][0]["response"]
    assert (result["status"], result["analysis_artifact"], result["version"]) == (
        "success",
        "analysis_report.txt",
        0,
    )
    assert responses[0]["artifact_delta"] == {"analysis_report.txt": 0}
    analysis = api_for(alice).get(
        f"/api/sessions/{session}/artifacts/analysis_report.txt/"
    )
    assert analysis["Content-Type"] == "text/plain; charset=utf-8"
    assert b"- Revenue grew 10%." in analysis.content


def test_a_user_artifact_follows_me_to_my_other_sessions_only(
    alice, bob, analyst_session, upload, api_for
):
    mine = analyst_session(alice)
    upload(alice, mine, b"my cv", filename="cv.txt", name="user:cv.txt")
    other = analyst_session(alice)
    bobs = analyst_session(bob)

    listing = api_for(alice).get(f"/api/sessions/{other}/artifacts/").json()

    assert [(a["filename"], a["scope"]) for a in listing] == [("user:cv.txt", "user")]
    assert api_for(bob).get(f"/api/sessions/{bobs}/artifacts/").json() == []


def test_another_user_cannot_list_download_or_upload(
    alice, bob, analyst_session, upload, api_for
):
    session = analyst_session(alice)
    upload(alice, session, b"secret")

    assert api_for(bob).get(f"/api/sessions/{session}/artifacts/").status_code == 404
    assert (
        api_for(bob).get(f"/api/sessions/{session}/artifacts/notes.txt/").status_code
        == 404
    )
    assert upload(bob, session, b"mine now").status_code == 404
    assert Artifact.objects.count() == 1


def test_an_upload_over_the_limit_is_refused_and_loses_nothing(
    alice, analyst_session, upload, api_for, settings
):
    session = analyst_session(alice)
    upload(alice, session, b"keep me")
    settings.TOOLCRIB_MAX_UPLOAD_BYTES = 10

    refused = upload(alice, session, b"far too many bytes")

    assert refused.status_code == 400
    assert "file" in refused.json()
    assert Artifact.objects.count() == 1
    kept = api_for(alice).get(f"/api/sessions/{session}/artifacts/notes.txt/")
    assert kept.content == b"keep me"


@pytest.mark.parametrize(
    "name", ["../evil.txt", "a/b.txt", "dir\\x.txt", "user:a/b", ".."]
)
def test_a_name_with_a_path_is_refused(alice, analyst_session, upload, name):
    session = analyst_session(alice)

    refused = upload(alice, session, b"x", name=name)

    assert refused.status_code == 400
    assert "name" in refused.json()
    assert not Artifact.objects.exists()


def test_an_empty_file_is_refused(alice, analyst_session, upload):
    session = analyst_session(alice)

    assert upload(alice, session, b"").status_code == 400


def test_unknown_artifacts_and_versions_are_not_found(
    alice, analyst_session, upload, api_for
):
    session = analyst_session(alice)
    upload(alice, session, b"x")
    client = api_for(alice)

    assert client.get(f"/api/sessions/{session}/artifacts/nope.txt/").status_code == 404
    assert (
        client.get(
            f"/api/sessions/{session}/artifacts/notes.txt/?version=5"
        ).status_code
        == 404
    )
    assert (
        client.get(
            f"/api/sessions/{session}/artifacts/notes.txt/?version=x"
        ).status_code
        == 400
    )


async def test_the_socket_shows_uploads_and_the_agents_saves(
    alice, analyst_session, upload
):
    session = await sync(analyst_session)(alice)
    token = await sync(issue_token)(user=alice)
    socket = WebsocketCommunicator(
        application,
        f"/ws/sessions/{session}/",
        headers=[(b"authorization", f"Token {token}".encode())],
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]

    await sync(upload)(alice, session, b"Revenue up.", "report.txt")
    uploaded = await socket.receive_json_from(timeout=TIMEOUT)
    await socket.send_json_to(
        {"type": "message", "text": 'analyze "report.txt" for "revenue"'}
    )
    frames = await frames_until_finished(socket)

    assert uploaded["event"]["artifact_delta"] == {"report.txt": 0}
    EventFrame.model_validate(uploaded)
    saves = [
        f["event"]["artifact_delta"] for f in frames if f["event"].get("artifact_delta")
    ]
    assert saves == [{"analysis_report.txt": 0}]
    await socket.disconnect()


async def frames_until_finished(socket: WebsocketCommunicator) -> list[dict]:
    frames = []
    while True:
        frame = await socket.receive_json_from(timeout=TIMEOUT)
        if frame["type"] == "event":
            frames.append(frame)
            if frame["event"]["kind"] == "run_finished":
                return frames


def test_deleting_a_session_deletes_its_files_but_not_my_user_files(
    alice, analyst_session, upload, api_for
):
    session = analyst_session(alice)
    upload(alice, session, b"session file", filename="a.txt")
    upload(alice, session, b"my file", filename="cv.txt", name="user:cv.txt")
    paths = list(Artifact.objects.values_list("filename", "storage_path"))

    assert api_for(alice).delete(f"/api/sessions/{session}/").status_code == 204

    assert list(Artifact.objects.values_list("filename", flat=True)) == ["user:cv.txt"]
    storage = artifact_storage()
    assert {name: storage.exists(path) for name, path in paths} == {
        "a.txt": False,
        "user:cv.txt": True,
    }


@pytest.mark.parametrize(
    ("name", "content_type"),
    [("scan.pdf", "application/pdf"), ("photo.png", "image/png")],
)
def test_a_pdf_or_an_image_asked_inline_is_shown_in_place_in_a_sandbox(
    alice, analyst_session, api_for, name, content_type
):
    session = analyst_session(alice)
    file = SimpleUploadedFile(name, b"bytes", content_type=content_type)
    api_for(alice).post(
        f"/api/sessions/{session}/artifacts/", {"file": file}, format="multipart"
    )
    url = f"/api/sessions/{session}/artifacts/{name}/"

    shown = api_for(alice).get(f"{url}?inline=1")
    saved = api_for(alice).get(url)

    assert shown["Content-Disposition"] == f'inline; filename="{name}"'
    # Only this site's own pages may frame it (the preview), still sandboxed.
    assert shown["X-Frame-Options"] == "SAMEORIGIN"
    assert shown["Content-Security-Policy"] == "sandbox"
    assert saved["Content-Disposition"] == f'attachment; filename="{name}"'
    assert saved["X-Frame-Options"] == "DENY"


def test_a_bad_inline_flag_is_400(alice, analyst_session, upload, api_for):
    session = analyst_session(alice)
    upload(alice, session, b"hi")

    response = api_for(alice).get(
        f"/api/sessions/{session}/artifacts/notes.txt/?inline=maybe"
    )

    assert response.status_code == 400
    assert "inline" in response.json()


def test_a_file_too_big_is_refused_in_words(
    alice, analyst_session, upload, api_for, settings
):
    settings.TOOLCRIB_MAX_UPLOAD_BYTES = 2048
    session = analyst_session(alice)

    response = upload(alice, session, b"x" * 2049)

    assert response.status_code == 400
    assert response.json() == {
        "file": ["Too big: a file may have at most 2.0\xa0KB (2048 bytes)."]
    }
