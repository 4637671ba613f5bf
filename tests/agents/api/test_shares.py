"""Sharing a session over the API (agents.shares): a link shown once, the session
as it was when shared, each opening audited for its owner, the team's setting
changed by staff only, and a shared conversation continued in one's own session."""

import pytest
from django.test import Client

from agents.models import Change, Event, Session, ShareView

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "weather_sentiment"


def share(client, session: str, **body):
    return client.post(f"/api/sessions/{session}/shares/", body, format="json")


def test_a_link_is_shown_once_and_listed_without_its_token(
    alice, demo_agents, start_session, api_for
):
    session = start_session(alice, AGENT)

    made = share(api_for(alice), session, expires_in_days=7)
    listed = api_for(alice).get(f"/api/sessions/{session}/shares/")

    assert made.status_code == 201, made.content
    body = made.json()
    assert body["url"].endswith(f"/shared/{body['token']}/")
    assert body["status"] == "active" and body["views"] == 0
    assert body["expires_at"] is not None and body["anyone"] is False
    assert listed.status_code == 200
    (row,) = listed.json()
    assert row["id"] == body["id"]
    assert "token" not in row and "url" not in row


@pytest.mark.parametrize(
    "body",
    [{"expires_in_days": 0}, {"expires_in_days": 366}, {"expires_in_days": "x"}],
)
def test_a_bad_expiry_is_a_400_naming_it(
    alice, demo_agents, start_session, api_for, body
):
    session = start_session(alice, AGENT)

    answer = share(api_for(alice), session, **body)

    assert answer.status_code == 400
    assert "expires_in_days" in answer.json()


def test_the_link_shows_the_session_as_it_was_when_shared(
    alice, bob, demo_agents, start_session, say, api_for
):
    session = start_session(alice, AGENT)
    say(alice, session, "weather in london?")
    link = share(api_for(alice), session).json()
    say(alice, session, "weather in paris?")

    frames = api_for(bob).get(f"/api/shared/{link['token']}/events/").json()
    about = api_for(bob).get(f"/api/shared/{link['token']}/").json()

    texts = " ".join(frame["event"].get("text") or "" for frame in frames)
    assert "london" in texts and "paris" not in texts
    assert max(frame["seq"] for frame in frames) == link["upto_seq"]
    assert Event.objects.filter(session_id=session, seq__gt=link["upto_seq"]).exists()
    assert about["owner"] == "alice" and about["agent"] == AGENT
    assert about["upto_seq"] == link["upto_seq"]


def test_paging_back_stays_within_the_share(
    alice, bob, demo_agents, start_session, say, api_for
):
    session = start_session(alice, AGENT)
    say(alice, session, "weather in london?")
    link = share(api_for(alice), session).json()
    say(alice, session, "weather in paris?")
    base = f"/api/shared/{link['token']}/events/"

    newest = api_for(bob).get(base, {"before": "end", "limit": 2}).json()
    older = api_for(bob).get(base, {"before": newest[0]["seq"], "limit": 2}).json()
    after = api_for(bob).get(base, {"after": link["upto_seq"]}).json()

    assert [f["seq"] for f in newest] == [link["upto_seq"] - 1, link["upto_seq"]]
    assert [f["seq"] for f in older] == [link["upto_seq"] - 3, link["upto_seq"] - 2]
    assert after == []


def test_each_opening_is_audited_and_its_owner_sees_who(
    alice, bob, demo_agents, start_session, say, api_for
):
    session = start_session(alice, AGENT)
    say(alice, session, "weather in london?")
    link = share(api_for(alice), session).json()
    base = f"/api/shared/{link['token']}/events/"

    api_for(bob).get(base, {"before": "end", "limit": 2}, REMOTE_ADDR="10.1.2.3")
    api_for(bob).get(base, {"before": 3, "limit": 2})  # paging on: the same view
    api_for(alice).get(base)

    (row,) = api_for(alice).get(f"/api/sessions/{session}/shares/").json()
    views = api_for(alice).get(f"/api/sessions/{session}/shares/{row['id']}/views/")
    assert row["views"] == 2 and row["last_viewed_at"] is not None
    assert [(v["viewer"], v["kind"]) for v in views.json()] == [
        ("alice", "view"),
        ("bob", "view"),
    ]
    assert views.json()[1]["ip"] == "10.1.2.3"


def test_revoking_ends_the_link_and_twice_changes_nothing(
    alice, bob, demo_agents, start_session, api_for
):
    session = start_session(alice, AGENT)
    link = share(api_for(alice), session).json()
    url = f"/api/sessions/{session}/shares/{link['id']}/"

    first = api_for(alice).delete(url)
    again = api_for(alice).delete(url)

    assert [first.status_code, again.status_code] == [204, 204]
    (row,) = api_for(alice).get(f"/api/sessions/{session}/shares/").json()
    assert row["status"] == "revoked" and row["revoked_by"] == "alice"
    gone = api_for(bob).get(f"/api/shared/{link['token']}/")
    assert gone.status_code == 410 and "revoked" in gone.json()["detail"]


def test_a_revocation_by_staff_is_in_the_change_audit(
    alice, make_user, demo_agents, start_session, api_for
):
    staff = make_user("root", is_staff=True)
    session = start_session(alice, AGENT)
    link = share(api_for(alice), session).json()

    api_for(staff).delete(f"/api/sessions/{session}/shares/{link['id']}/")

    change = Change.objects.get(kind="agents.share")
    assert (change.actor_name, change.action) == ("root", "revoke")


def test_only_staff_change_the_sharing_setting_and_it_is_audited(
    alice, make_user, api_for
):
    staff = make_user("root", is_staff=True)

    read = api_for(alice).get("/api/share-settings/")
    refused = api_for(alice).patch(
        "/api/share-settings/", {"anyone_with_link": True}, format="json"
    )
    changed = api_for(staff).patch(
        "/api/share-settings/", {"anyone_with_link": True}, format="json"
    )
    bad = api_for(staff).patch("/api/share-settings/", {}, format="json")

    assert read.json() == {"anyone_with_link": False}
    assert refused.status_code == 403
    assert changed.json() == {"anyone_with_link": True}
    assert bad.status_code == 400 and "anyone_with_link" in bad.json()
    assert api_for(alice).get("/api/share-settings/").json()["anyone_with_link"]
    change = Change.objects.get(kind="agents.sharesettings")
    assert change.actor_name == "root"
    assert change.changes["anyone_with_link"] == [None, True]


def test_continuing_a_shared_session_gives_the_model_its_history(
    alice, bob, demo_agents, start_session, say, api_for
):
    session = start_session(alice, AGENT)
    say(alice, session, "weather in london?")
    link = share(api_for(alice), session).json()
    say(alice, session, "weather in paris?")

    forked = api_for(bob).post(f"/api/shared/{link['token']}/fork/")

    assert forked.status_code == 201, forked.content
    copy = forked.json()
    assert copy["owner"]["username"] == "bob" and copy["agent"] == AGENT
    shared = Event.objects.filter(
        session_id=session, is_adk=True, seq__lte=link["upto_seq"]
    )
    copied = Event.objects.filter(session_id=copy["id"]).order_by("seq")
    assert [e.kind for e in copied] == [e.kind for e in shared.order_by("seq")]
    assert "paris" not in str([e.data for e in copied])
    # Her page opens on it, and it takes a turn that reads the copied history.
    run = say(bob, copy["id"], "and tomorrow?")
    assert run["status"] == "succeeded"
    (fork_view,) = ShareView.objects.filter(kind="fork")
    assert fork_view.viewer == bob
    assert Session.objects.get(pk=copy["id"]).owner == bob


def test_the_shared_page_needs_no_session_access(
    alice, bob, demo_agents, start_session, api_for
):
    session = start_session(alice, AGENT)
    link = share(api_for(alice), session).json()
    client = Client()
    client.force_login(bob)

    page = client.get(f"/shared/{link['token']}/")

    assert page.status_code == 200
    assert b'id="shared-page"' in page.content
    assert b'id="composer"' not in page.content
