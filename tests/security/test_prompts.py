"""Another person's prompt: unseen, unchanged, undeleted; a share reaches only the
group's members."""

import pytest
from django.contrib.auth.models import Group

from agents.models import Prompt

pytestmark = pytest.mark.django_db


def test_another_users_private_prompt_is_not_found_for_any_action(alice, bob, api_for):
    secret = Prompt.objects.create(
        owner=alice, command="payroll", title="Payroll", body="Salaries: {{who}}"
    )
    mallory = api_for(bob)
    assert mallory.get("/api/prompts/").json() == []
    assert mallory.get("/api/prompts/?q=payroll").json() == []
    url = f"/api/prompts/{secret.pk}/"
    assert mallory.get(url).status_code == 404
    put = mallory.put(
        url, {"command": "payroll", "title": "x", "body": "pwned"}, format="json"
    )
    assert put.status_code == 404
    assert mallory.delete(url).status_code == 404
    secret.refresh_from_db()
    assert secret.body == "Salaries: {{who}}"


def test_sharing_to_a_group_she_is_not_in_does_not_reach_its_members(
    alice, bob, api_for
):
    Group.objects.create(name="executives").user_set.add(bob)
    refused = api_for(alice).post(
        "/api/prompts/",
        {"command": "phish", "title": "Click", "body": "x", "groups": ["executives"]},
        format="json",
    )
    assert refused.status_code == 400
    assert api_for(bob).get("/api/prompts/").json() == []


def test_a_member_who_uses_a_shared_prompt_cannot_take_it_over(alice, bob, api_for):
    team = Group.objects.create(name="team")
    team.user_set.add(alice, bob)
    shared = Prompt.objects.create(owner=alice, command="s", title="S", body="Hello")
    shared.groups.add(team)
    # Changing it "as a whole" must not move it to bob nor unshare it.
    response = api_for(bob).put(
        f"/api/prompts/{shared.pk}/",
        {"command": "s", "title": "S", "body": "evil", "groups": []},
        format="json",
    )
    assert response.status_code == 403
    shared.refresh_from_db()
    assert (shared.owner_id, shared.body) == (alice.pk, "Hello")
    assert list(shared.groups.values_list("name", flat=True)) == ["team"]


def test_signed_out_gets_nothing(client, alice):
    Prompt.objects.create(owner=alice, command="s", title="S", body="Hello")
    assert client.get("/api/prompts/").status_code in (401, 403)
