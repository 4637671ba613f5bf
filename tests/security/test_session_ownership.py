"""Renaming, archiving and deleting a session: its owner and staff only. Another
user gets 404, as for a session that does not exist, and nothing changes; no
search shows another user's session (tests/agents/api/test_find_sessions.py)."""

import pytest

from agents.models import Session
from agents.sessions import create_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices(alice, demo_agents) -> Session:
    session = create_session(user=alice, agent=demo_agents["bank"])
    Session.objects.filter(pk=session.pk).update(title="Alice's")
    return session


@pytest.mark.parametrize(
    "body", [{"title": "Mallory's now"}, {"archived": True}], ids=["rename", "archive"]
)
def test_another_user_cannot_change_a_session(alices, bob, api_for, body):
    response = api_for(bob).patch(f"/api/sessions/{alices.pk}/", body, format="json")

    assert response.status_code == 404
    alices.refresh_from_db()
    assert (alices.title, alices.archived_at) == ("Alice's", None)


def test_another_user_cannot_unarchive_a_session(alices, bob, api_for):
    Session.objects.filter(pk=alices.pk).update(archived_at="2026-01-01T00:00Z")

    response = api_for(bob).patch(
        f"/api/sessions/{alices.pk}/", {"archived": False}, format="json"
    )

    assert response.status_code == 404
    alices.refresh_from_db()
    assert alices.archived_at is not None


def test_another_user_cannot_delete_a_session(alices, bob, api_for):
    response = api_for(bob).delete(f"/api/sessions/{alices.pk}/")

    assert response.status_code == 404
    assert Session.objects.filter(pk=alices.pk).exists()


def test_another_users_archive_is_not_listed(alices, bob, api_for):
    Session.objects.filter(pk=alices.pk).update(archived_at="2026-01-01T00:00Z")

    response = api_for(bob).get("/api/sessions/", {"archived": "true"})

    assert response.json()["results"] == []


def test_staff_may_rename_archive_and_delete_anyones_session(
    alices, make_user, api_for
):
    staff = api_for(make_user("root", is_staff=True))
    url = f"/api/sessions/{alices.pk}/"

    renamed = staff.patch(url, {"title": "Tidied"}, format="json")
    archived = staff.patch(url, {"archived": True}, format="json")
    deleted = staff.delete(url)

    assert (renamed.status_code, renamed.json()["title"]) == (200, "Tidied")
    assert archived.json()["archived_at"]
    assert deleted.status_code == 204
    assert not Session.objects.filter(pk=alices.pk).exists()


def test_a_put_is_not_a_way_around_the_rules(alices, api_for, alice):
    response = api_for(alice).put(
        f"/api/sessions/{alices.pk}/", {"title": "x", "owner": 99}, format="json"
    )

    assert response.status_code == 405
