"""Memory through the API: add a session, close one, search, and the document analyst."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from agents.models import MemoryEntry, Session

pytestmark = pytest.mark.django_db(transaction=True)


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
def search(api_for):
    def find(user, query: str, agent: str = "document_analyst") -> list[dict]:
        response = api_for(user).get("/api/memory/", {"agent": agent, "q": query})
        assert response.status_code == 200, response.content
        return response.json()

    return find


def test_a_session_added_to_memory_is_found_by_its_user_only(
    alice, bob, demo_agents, start_session, say, api_for, search
):
    session = start_session(alice, "document_analyst")
    say(alice, session, "our revenue target is 5 million")

    added = api_for(alice).post(f"/api/sessions/{session}/memory/")

    assert added.status_code == 200
    assert added.json()["remembered"] >= 1
    found = search(alice, "revenue target")
    assert found[0]["session"] == session
    assert "revenue target" in found[0]["text"]
    assert search(bob, "revenue target") == []


def test_another_user_cannot_add_my_session_to_memory(
    alice, bob, demo_agents, start_session, say, api_for
):
    session = start_session(alice, "document_analyst")
    say(alice, session, "a private thought")

    assert api_for(bob).post(f"/api/sessions/{session}/memory/").status_code == 404
    assert not MemoryEntry.objects.exists()


def test_closing_a_session_remembers_it_and_stops_new_turns(
    alice, demo_agents, start_session, say, api_for, search
):
    session = start_session(alice, "document_analyst")
    say(alice, session, "the launch is on friday")
    client = api_for(alice)

    closed = client.post(f"/api/sessions/{session}/close/")

    assert closed.status_code == 200
    assert closed.json()["closed_at"]
    assert search(alice, "launch friday")
    refused = client.post(
        f"/api/sessions/{session}/messages/", {"text": "hi"}, format="json"
    )
    assert refused.status_code == 409
    assert refused.json()["detail"].startswith("This session is closed")
    upload = SimpleUploadedFile("a.txt", b"x", content_type="text/plain")
    refused = client.post(
        f"/api/sessions/{session}/artifacts/", {"file": upload}, format="multipart"
    )
    assert refused.status_code == 409
    assert client.post(f"/api/sessions/{session}/close/").status_code == 200


def test_the_analyst_uses_what_i_remember_and_never_what_others_do(
    alice, bob, demo_agents, start_session, say, api_for, events_of
):
    past = start_session(alice, "document_analyst")
    say(alice, past, "our revenue target is 5 million")
    api_for(alice).post(f"/api/sessions/{past}/close/")
    bobs_past = start_session(bob, "document_analyst")
    say(bob, bobs_past, "bob thinks revenue is irrelevant")
    api_for(bob).post(f"/api/sessions/{bobs_past}/close/")

    context = analyze_report(alice, start_session, say, api_for, events_of)

    assert any("revenue target is 5 million" in line for line in context)
    assert not any("bob" in line for line in context)


def test_search_needs_an_agent_and_a_query(alice, demo_agents, api_for):
    client = api_for(alice)

    assert client.get("/api/memory/", {"agent": "document_analyst"}).status_code == 400
    assert client.get("/api/memory/", {"agent": "nope", "q": "x"}).status_code == 404


def analyze_report(user, start_session, say, api_for, events_of) -> list[str]:
    session = start_session(user, "document_analyst")
    upload = SimpleUploadedFile(
        "report.txt", b"Revenue grew.\n", content_type="text/plain"
    )
    api_for(user).post(
        f"/api/sessions/{session}/artifacts/", {"file": upload}, format="multipart"
    )
    say(user, session, 'analyze "report.txt" for "revenue"')
    result = next(
        f["event"]["function_responses"][0]["response"]
        for f in events_of(user, session)
        if f["event"]["kind"] == "function_response"
    )
    assert result["status"] == "success"
    assert Session.objects.get(pk=session).closed_at is None
    return result["memory_context"]
