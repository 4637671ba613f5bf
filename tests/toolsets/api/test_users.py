"""/api/users/ and /api/invites/: staff list, create, invite, switch off and on,
and make staff; the rules of a change answer 400 next to the field."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core import mail
from django.test import Client

from toolsets.models import Invite, ProviderIdentity

pytestmark = pytest.mark.django_db

STRONG = "correct-horse-battery-staple"


@pytest.fixture
def staff(make_user):
    return make_user("sam", is_staff=True)


@pytest.fixture
def client(api_for, staff):
    return api_for(staff)


def test_users_are_listed_a_page_at_a_time_by_username(client, make_user):
    for name in ["amy", "ben", "cat", "dan"]:
        make_user(name)

    first = client.get("/api/users/", {"limit": 2}).json()
    second = client.get("/api/users/", {"limit": 2, "after": "ben"}).json()

    assert [u["username"] for u in first] == ["amy", "ben"]
    assert [u["username"] for u in second] == ["cat", "dan"]
    assert first[0]["source"] == "password"
    assert first[0]["provider_fields"] == []


def test_search_finds_a_user_by_email(client, make_user):
    user = make_user("zed")
    user.email = "zed@example.com"
    user.save()

    found = client.get("/api/users/", {"search": "example.com"}).json()

    assert [u["username"] for u in found] == ["zed"]


def test_staff_create_a_user_with_a_password_in_groups(client):
    Group.objects.create(name="support")
    answer = client.post(
        "/api/users/",
        {
            "username": "newbie",
            "password": STRONG,
            "email": "n@example.com",
            "groups": ["support"],
        },
        format="json",
    )

    assert answer.status_code == 201, answer.json()
    assert answer.json()["groups"] == ["support"]
    assert "password" not in answer.json()
    assert get_user_model().objects.get(username="newbie").check_password(STRONG)


@pytest.mark.parametrize(
    ("password", "says"),
    [("short", "too short"), ("password123", "too common"), ("8473629184", "numeric")],
)
def test_a_weak_password_is_refused_next_to_the_field(client, password, says):
    answer = client.post(
        "/api/users/", {"username": "newbie", "password": password}, format="json"
    )

    assert answer.status_code == 400
    assert says in " ".join(answer.json()["password"])
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_a_taken_username_or_unknown_group_is_refused_by_field(client, make_user):
    make_user("taken")

    taken = client.post(
        "/api/users/", {"username": "Taken", "password": STRONG}, format="json"
    )
    no_group = client.post(
        "/api/users/",
        {"username": "x", "password": STRONG, "groups": ["nope"]},
        format="json",
    )

    assert taken.status_code == 400 and "username" in taken.json()
    assert no_group.status_code == 400 and "groups" in no_group.json()


def test_an_email_another_user_has_is_refused_on_create_and_change(client, make_user):
    bob = make_user("bob")
    bob.email = "bob@example.com"
    bob.save()
    make_user("amy")

    made = client.post(
        "/api/users/",
        {"username": "bob2", "password": STRONG, "email": "BOB@example.com"},
        format="json",
    )
    changed = client.patch(
        "/api/users/amy/", {"email": "Bob@Example.com"}, format="json"
    )
    kept = client.patch("/api/users/bob/", {"email": "BOB@example.com"}, format="json")

    said = {"email": ["bob has this email already."]}
    assert (made.status_code, made.json()) == (400, said)
    assert (changed.status_code, changed.json()) == (400, said)
    assert kept.status_code == 200, kept.json()
    assert not get_user_model().objects.filter(username="bob2").exists()


def test_staff_switch_a_user_off_and_on(client, alice):
    off = client.patch("/api/users/alice/", {"is_active": False}, format="json")
    on = client.patch("/api/users/alice/", {"is_active": True}, format="json")

    assert off.status_code == 200 and off.json()["is_active"] is False
    assert on.json()["is_active"] is True


def test_staff_make_a_user_staff_and_unmake_her(client, alice):
    made = client.patch("/api/users/alice/", {"is_staff": True}, format="json")
    unmade = client.patch("/api/users/alice/", {"is_staff": False}, format="json")

    assert made.json()["is_staff"] is True
    assert unmade.json()["is_staff"] is False


def test_staff_cannot_switch_themselves_off_or_unmake_themselves(client, staff):
    make_user_staff = get_user_model().objects.create_user("other", is_staff=True)
    assert make_user_staff.is_staff

    off = client.patch("/api/users/sam/", {"is_active": False}, format="json")
    unstaffed = client.patch("/api/users/sam/", {"is_staff": False}, format="json")

    assert off.status_code == 400 and "is_active" in off.json()
    assert unstaffed.status_code == 400 and "is_staff" in unstaffed.json()
    staff.refresh_from_db()
    assert staff.is_active and staff.is_staff


def test_a_field_that_cannot_be_changed_is_refused(client, alice):
    answer = client.patch(
        "/api/users/alice/", {"username": "eve", "password": STRONG}, format="json"
    )

    assert answer.status_code == 400
    alice.refresh_from_db()
    assert alice.username == "alice" and alice.check_password("pw")


def test_a_single_sign_on_user_shows_her_source_and_keeps_provider_fields(
    client, alice, settings
):
    settings.TOOLCRIB_OIDC_PROVIDER_NAME = "Keycloak"
    ProviderIdentity.objects.create(user=alice, issuer="https://idp", subject="a1")

    shown = client.get("/api/users/alice/").json()
    renamed = client.patch(
        "/api/users/alice/", {"email": "x@example.com"}, format="json"
    )
    switched_off = client.patch(
        "/api/users/alice/", {"is_active": False}, format="json"
    )

    assert shown["source"] == "Keycloak" and shown["single_sign_on"] is True
    assert set(shown["provider_fields"]) >= {"email", "first_name", "password"}
    assert renamed.status_code == 400 and "Keycloak" in renamed.json()["email"][0]
    assert switched_off.status_code == 200  # standing stays staff's


def test_an_invite_link_is_shown_once_and_lists_without_it(client):
    Group.objects.create(name="support")

    made = client.post(
        "/api/invites/", {"groups": ["support"], "days": 3}, format="json"
    )
    listed = client.get("/api/invites/").json()

    assert made.status_code == 201
    link = made.json()["link"]
    assert link.startswith("http://testserver/invite/")
    token = link.rstrip("/").rsplit("/", 1)[1]
    assert token not in Invite.objects.get().digest
    assert [i["groups"] for i in listed] == [["support"]]
    assert "link" not in listed[0]


def test_an_invite_is_mailed_when_mail_is_configured(client, settings):
    settings.EMAIL_HOST = "mail.example"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"

    made = client.post("/api/invites/", {"email": "new@example.com"}, format="json")

    assert made.json()["mailed"] is True
    assert mail.outbox[0].to == ["new@example.com"]
    assert made.json()["link"] in mail.outbox[0].body


def test_no_mail_goes_without_a_mail_server(client, settings):
    settings.EMAIL_HOST = ""

    made = client.post("/api/invites/", {"email": "new@example.com"}, format="json")

    assert made.json()["mailed"] is False
    assert mail.outbox == []


@pytest.mark.parametrize(
    "body", [{"days": 0}, {"days": 31}, {"email": "nope"}, {"groups": ["none"]}]
)
def test_bad_invite_input_is_a_400_by_field(client, body):
    answer = client.post("/api/invites/", body, format="json")

    assert answer.status_code == 400
    assert set(answer.json()) == set(body)
    assert not Invite.objects.exists()


def test_inviting_an_email_that_has_an_account_or_a_waiting_invite_is_400(
    client, make_user
):
    bob = make_user("bob")
    bob.email = "bob@example.com"
    bob.save()
    has_account = client.post(
        "/api/invites/", {"email": "Bob@Example.com"}, format="json"
    )
    first = client.post("/api/invites/", {"email": "new@example.com"}, format="json")
    again = client.post("/api/invites/", {"email": "NEW@example.com"}, format="json")

    assert has_account.status_code == 400
    assert has_account.json() == {"email": ["bob has this email already."]}
    assert first.status_code == 201
    assert again.status_code == 400
    assert again.json() == {
        "email": [
            "An invitation to this email is waiting already: withdraw it to send "
            "a new one."
        ]
    }
    assert client.delete(f"/api/invites/{first.json()['id']}/").status_code == 204
    resent = client.post("/api/invites/", {"email": "new@example.com"}, format="json")
    assert resent.status_code == 201


def test_a_withdrawn_invite_leaves_the_list(client):
    made = client.post("/api/invites/", {}, format="json").json()

    assert client.delete(f"/api/invites/{made['id']}/").status_code == 204
    assert client.get("/api/invites/").json() == []
    assert client.delete(f"/api/invites/{made['id']}/").status_code == 404


def test_with_passwords_off_nobody_is_created_or_invited(client, settings):
    settings.TOOLCRIB_PASSWORD_LOGIN = False

    created = client.post(
        "/api/users/", {"username": "x", "password": STRONG}, format="json"
    )
    invited = client.post("/api/invites/", {}, format="json")

    assert created.status_code == 403 and invited.status_code == 403


def changes_of(client, **query) -> list[dict]:
    return client.get("/api/changes/", query).json()["results"]


def test_every_change_to_a_user_is_audited_without_her_password(client, alice):
    Group.objects.create(name="support")
    client.post(
        "/api/users/",
        {"username": "newbie", "password": STRONG, "groups": ["support"]},
        format="json",
    )
    client.patch("/api/users/alice/", {"is_active": False}, format="json")

    audit = changes_of(client, kind="auth.user")

    switched_off, group, created = audit[:3]
    assert switched_off["actor"] == "sam" and switched_off["object_repr"] == "alice"
    assert switched_off["changes"] == {"is_active": [True, False]}
    assert group["action"] == "group added"
    assert group["changes"] == {"groups": [None, "support"]}
    assert created["action"] == "create" and created["object_repr"] == "newbie"
    hashed = get_user_model().objects.get(username="newbie").password
    text = str(audit)
    assert STRONG not in text and hashed not in text


def test_an_invite_and_its_use_are_audited_without_its_token(client):
    made = client.post("/api/invites/", {"is_staff": True}, format="json").json()
    token = made["link"].rstrip("/").rsplit("/", 1)[1]
    joined = Client().post(
        made["link"], {"username": "newbie", "password1": STRONG, "password2": STRONG}
    )
    assert joined.status_code == 302

    invited = changes_of(client, kind="toolsets.invite")
    created = changes_of(client, kind="auth.user", actor="newbie")

    assert [c["action"] for c in invited] == ["update", "create"]
    assert invited[1]["actor"] == "sam"
    assert created[0]["changes"]["is_staff"] == [None, True]
    everything = str(changes_of(client))
    assert token not in everything
    assert Invite.objects.get().digest not in everything
