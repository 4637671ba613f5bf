"""The notices API: my preferences; staff's destinations and delivery log."""

import pytest

from agents.models import Delivery, WebhookDestination
from agents.notices.enqueue import enqueue
from project.sealing import unseal
from tests.agents.notices.conftest import make_destination

pytestmark = pytest.mark.django_db

DEFAULTS = {
    "approval": {"mail": True, "webhook": True},
    "credential": {"mail": False, "webhook": False},
    "call": {"mail": False, "webhook": False},
}
HOOK = {
    "name": "managers",
    "url": "https://hooks.slack.com/services/T0/B0/xyz",
    "format": "slack",
    "kinds": ["approval"],
    "group": "managers",
}


def test_my_preferences_start_as_the_defaults_and_change_by_kind(api_for, alice):
    api = api_for(alice)
    assert api.get("/api/notices/preferences/").json() == DEFAULTS

    changed = api.put(
        "/api/notices/preferences/",
        {"call": {"mail": True, "webhook": False}},
        format="json",
    )

    assert changed.status_code == 200
    assert changed.json() == DEFAULTS | {"call": {"mail": True, "webhook": False}}
    assert api.get("/api/notices/preferences/").json() == changed.json()


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"approval": {"mail": "yes", "webhook": True}},
        {"approval": {"mail": True}},
        {"chat": {"mail": True, "webhook": True}},
        {"approval": None},
    ],
)
def test_bad_preferences_are_a_400_naming_the_field(api_for, alice, body):
    answer = api_for(alice).put("/api/notices/preferences/", body, format="json")

    assert answer.status_code == 400
    assert answer.json()


def test_staff_add_a_destination_whose_secret_is_sealed_and_never_shown(
    api_for, make_user
):
    staff = api_for(make_user("root", is_staff=True))

    made = staff.post(
        "/api/notices/webhooks/",
        HOOK | {"format": "generic", "secret": "0123456789abcdef0123"},
        format="json",
    )

    assert made.status_code == 201, made.content
    assert made.json()["signed"] is True
    assert made.json()["host"] == "hooks.slack.com"
    assert "xyz" not in made.content.decode()  # the URL is a credential
    assert "secret" not in made.json() and "sealed_secret" not in made.json()
    stored = WebhookDestination.objects.get()
    assert unseal("notices.webhook", stored.sealed_secret) == "0123456789abcdef0123"
    assert unseal("notices.webhook_url", stored.sealed_url) == HOOK["url"]
    assert "xyz" not in stored.sealed_url
    changed = staff.put(
        f"/api/notices/webhooks/{stored.pk}/",
        HOOK | {"format": "generic", "enabled": False},
        format="json",
    )
    assert changed.json()["signed"] is True and changed.json()["enabled"] is False
    assert staff.delete(f"/api/notices/webhooks/{stored.pk}/").status_code == 204
    assert not WebhookDestination.objects.exists()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"url": "ftp://hooks.example.com/x"}, "url"),
        ({"url": "https://user:pw@hooks.example.com/x"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"kinds": []}, "kinds"),
        ({"kinds": ["mail"]}, "kinds"),
        ({"format": "discord"}, "format"),
        ({"secret": "0123456789abcdef0123"}, "non_field_errors"),  # slack: unsigned
        ({"user": 1}, "non_field_errors"),  # a person's and a team's at once
        ({"name": ""}, "name"),
        ({"name": "a\x00b"}, "name"),
        ({"extra": 1}, "extra"),
    ],
)
def test_a_bad_destination_is_a_400_naming_the_field(api_for, make_user, change, field):
    staff = api_for(make_user("root", is_staff=True))

    answer = staff.post("/api/notices/webhooks/", HOOK | change, format="json")

    assert answer.status_code == 400
    assert field in answer.json(), answer.json()
    assert not WebhookDestination.objects.exists()


def test_a_destination_of_an_unknown_user_or_a_taken_name_is_refused(
    api_for, make_user
):
    staff = api_for(make_user("root", is_staff=True))
    hook = HOOK | {"group": ""}

    nobody = staff.post("/api/notices/webhooks/", hook | {"user": 99999}, format="json")
    staff.post("/api/notices/webhooks/", hook, format="json")
    again = staff.post("/api/notices/webhooks/", hook, format="json")

    assert (nobody.status_code, again.status_code) == (400, 400)
    assert "user" in nobody.json() and "name" in again.json()


def test_people_who_are_not_staff_see_no_destination_nor_delivery(api_for, alice):
    make_destination(name="x", url="https://h.example.com", kinds=[])
    api = api_for(alice)

    for path in ("/api/notices/webhooks/", "/api/notices/deliveries/"):
        assert api.get(path).status_code == 403
    assert api.post("/api/notices/webhooks/", HOOK, format="json").status_code == 403
    assert (
        api.delete(
            f"/api/notices/webhooks/{WebhookDestination.objects.get().pk}/"
        ).status_code
        == 403
    )


def test_staff_read_the_delivery_log_newest_first_by_status(
    api_for, make_user, make_request, settings
):
    settings.EMAIL_HOST = "mail.example.com"
    request = make_request()
    enqueue([request])
    Delivery.objects.filter(address="dave@example.com").update(
        status="failed", attempts=3, last_error="The webhook answered HTTP 500."
    )
    staff = api_for(make_user("root", is_staff=True))

    every = staff.get("/api/notices/deliveries/").json()
    failed = staff.get("/api/notices/deliveries/?status=failed").json()
    mine = staff.get(f"/api/notices/deliveries/?request={request.pk}&limit=1").json()

    assert [d["address"] for d in every] == ["dave@example.com", "carol@example.com"]
    assert every[1] | {"id": 0, "created_at": 0, "next_attempt_at": 0} == {
        "id": 0,
        "request": request.pk,
        "channel": "mail",
        "recipient": "carol",
        "destination": None,
        "address": "carol@example.com",
        "status": "queued",
        "attempts": 0,
        "last_error": "",
        "next_attempt_at": 0,
        "created_at": 0,
        "sent_at": None,
    }
    assert [d["status"] for d in failed] == ["failed"]
    assert len(mine) == 1
    bad = staff.get("/api/notices/deliveries/?status=lost")
    assert bad.status_code == 400 and "status" in bad.json()
    assert staff.get("/api/notices/deliveries/?before=x").status_code == 400
