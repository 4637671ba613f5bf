"""The prompt library over REST: my prompts, those shared to my groups, variables,
and the field errors a bad prompt gets."""

import threading

import pytest
from django.contrib.auth.models import Group
from django.db import close_old_connections

from agents.models import Prompt

pytestmark = pytest.mark.django_db


def _new(client, **fields):
    body = {"command": "summarize", "title": "Summarize", "body": "Summarize this."}
    body.update(fields)
    return client.post("/api/prompts/", body, format="json")


def test_a_prompt_lists_its_variables_in_order_each_once(alice, api_for):
    made = _new(
        api_for(alice),
        command="/Review",
        body="Review {{ file }} for {{audience}}; keep {{file}} short. {{not a var}} {x}",
    )
    # A leading slash is what people type: it is not part of the command;
    # an upper-case command is refused rather than silently changed.
    assert made.status_code == 400, made.content
    assert "command" in made.json()
    made = _new(
        api_for(alice),
        command="/review",
        body="Review {{ file }} for {{audience}}; keep {{file}} short. {{not a var}} {x}",
    )
    assert made.status_code == 201, made.content
    prompt = made.json()
    assert prompt["command"] == "review"
    assert prompt["variables"] == ["file", "audience"]
    assert prompt["owner"] == "alice" and prompt["mine"] and prompt["can_change"]
    listed = api_for(alice).get("/api/prompts/").json()
    assert [p["command"] for p in listed] == ["review"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"command": ""}, "command"),
        ({"command": "two words"}, "command"),
        ({"command": "-dash-first"}, "command"),
        ({"command": "x" * 70}, "command"),
        ({"title": "   "}, "title"),
        ({"title": "two\nlines"}, "title"),
        ({"body": "   \n "}, "body"),
        ({"body": "x" * 20_001}, "body"),
        ({"body": " ".join(f"{{{{v{i}}}}}" for i in range(21))}, "body"),
        ({"groups": "staff"}, "groups"),
        ({"command": 7}, "command"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_a_bad_prompt_is_a_400_naming_its_field_and_nothing_is_kept(
    alice, api_for, fields, field
):
    response = _new(api_for(alice), **fields)
    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()
    assert not Prompt.objects.exists()


def test_a_command_is_mine_once(alice, bob, api_for):
    assert _new(api_for(alice)).status_code == 201
    again = _new(api_for(alice), title="Another")
    assert again.status_code == 400
    assert again.json() == {"command": ["You already have a prompt /summarize."]}
    # bob's own /summarize is his.
    assert _new(api_for(bob)).status_code == 201


def test_a_prompt_shared_to_a_group_is_usable_by_its_members_not_changed(
    alice, bob, make_user, api_for
):
    team = Group.objects.create(name="research")
    alice.groups.add(team)
    bob.groups.add(team)
    carol = make_user("carol")
    made = _new(api_for(alice), groups=["research"]).json()
    assert made["groups"] == ["research"]

    seen_by_bob = api_for(bob).get("/api/prompts/").json()
    assert [
        (p["command"], p["owner"], p["mine"], p["can_change"]) for p in seen_by_bob
    ] == [("summarize", "alice", False, False)]
    assert api_for(bob).get(f"/api/prompts/{made['id']}/").status_code == 200
    change = api_for(bob).put(
        f"/api/prompts/{made['id']}/",
        {"command": "summarize", "title": "Mine now", "body": "x"},
        format="json",
    )
    assert change.status_code == 403
    assert api_for(bob).delete(f"/api/prompts/{made['id']}/").status_code == 403
    assert Prompt.objects.get().title == "Summarize"

    # carol, in no group of it, does not see it at all.
    assert api_for(carol).get("/api/prompts/").json() == []
    assert api_for(carol).get(f"/api/prompts/{made['id']}/").status_code == 404

    # Unshared, bob loses it from the next request.
    api_for(alice).put(
        f"/api/prompts/{made['id']}/",
        {"command": "summarize", "title": "Summarize", "body": "x", "groups": []},
        format="json",
    )
    assert api_for(bob).get("/api/prompts/").json() == []


def test_she_shares_only_to_her_own_groups_staff_to_any(alice, make_user, api_for):
    Group.objects.create(name="finance")
    mine = Group.objects.create(name="research")
    alice.groups.add(mine)
    refused = _new(api_for(alice), groups=["research", "finance"])
    assert refused.status_code == 400
    assert refused.json() == {
        "groups": [
            "You may share a prompt only to your own groups: finance is not one."
        ]
    }
    assert [g["name"] for g in api_for(alice).get("/api/prompts/groups/").json()] == [
        "research"
    ]
    admin = make_user("admin", is_staff=True)
    assert [g["name"] for g in api_for(admin).get("/api/prompts/groups/").json()] == [
        "finance",
        "research",
    ]
    assert _new(api_for(admin), groups=["finance"]).status_code == 201


def test_staff_may_change_and_delete_anyones_prompt(alice, make_user, api_for):
    made = _new(api_for(alice)).json()
    admin = make_user("admin", is_staff=True)
    changed = api_for(admin).put(
        f"/api/prompts/{made['id']}/",
        {"command": "summarize", "title": "Tidied", "body": "Summarize, briefly."},
        format="json",
    )
    assert changed.status_code == 200, changed.content
    assert changed.json()["owner"] == "alice"
    assert api_for(admin).delete(f"/api/prompts/{made['id']}/").status_code == 204
    assert api_for(alice).get("/api/prompts/").json() == []


def test_q_narrows_to_a_command_or_title(alice, api_for):
    client = api_for(alice)
    _new(client, command="summarize", title="Summarize a text")
    _new(client, command="review", title="Code review")
    _new(client, command="translate", title="Into German")
    assert [p["command"] for p in client.get("/api/prompts/?q=rev").json()] == [
        "review"
    ]
    assert [p["command"] for p in client.get("/api/prompts/?q=GERMAN").json()] == [
        "translate"
    ]


@pytest.mark.django_db(transaction=True)
def test_two_saves_of_one_command_at_once_keep_one_and_refuse_the_other(alice, api_for):
    client_one, client_two = api_for(alice), api_for(alice)
    barrier = threading.Barrier(2)
    codes = []

    def save(client):
        barrier.wait()
        try:
            codes.append(_new(client).status_code)
        finally:
            close_old_connections()

    threads = [
        threading.Thread(target=save, args=(c,)) for c in (client_one, client_two)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [201, 400]
    assert Prompt.objects.count() == 1
