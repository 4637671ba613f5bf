"""Eval sets are their owner's: another user reads none of hers (404), nor makes a
case from her session; a member of a group it is shared to reads it but changes
nothing (403)."""

import pytest
from django.contrib.auth.models import Group

from agents.sessions import create_session
from evals.models import EvalCase, EvalSet

pytestmark = pytest.mark.django_db

INVOCATION = {"user_content": {"role": "user", "parts": [{"text": "hi"}]}}


@pytest.fixture
def alices_set(alice, api_for):
    client = api_for(alice)
    made = client.post("/api/evalsets/", {"name": "private"}, format="json").json()
    client.post(
        f"/api/evalsets/{made['id']}/cases/",
        {"conversation": [INVOCATION], "eval_id": "one"},
        format="json",
    )
    return made["id"]


@pytest.fixture
def case_id(alices_set):
    return EvalCase.objects.get(eval_set_id=alices_set).pk


def reads(client, set_id, case_id):
    return {
        "set": client.get(f"/api/evalsets/{set_id}/"),
        "cases": client.get(f"/api/evalsets/{set_id}/cases/"),
        "case": client.get(f"/api/evalsets/{set_id}/cases/{case_id}/"),
        "export": client.get(f"/api/evalsets/{set_id}/export/"),
        "test_config": client.get(f"/api/evalsets/{set_id}/export/test-config/"),
    }


def writes(client, set_id, case_id, session_id):
    case_url = f"/api/evalsets/{set_id}/cases/{case_id}/"
    return {
        "rename": client.patch(
            f"/api/evalsets/{set_id}/", {"name": "x"}, format="json"
        ),
        "add_case": client.post(
            f"/api/evalsets/{set_id}/cases/",
            {"conversation": [INVOCATION]},
            format="json",
        ),
        "edit_case": client.patch(case_url, {"eval_id": "two"}, format="json"),
        "delete_case": client.delete(case_url),
        "from_session": client.post(
            f"/api/evalsets/{set_id}/cases/from-session/",
            {"session": session_id},
            format="json",
        ),
        "delete": client.delete(f"/api/evalsets/{set_id}/"),
    }


def test_another_user_can_neither_read_nor_change_a_set(
    alice, bob, api_for, alices_set, case_id, demo_agents
):
    session = create_session(user=bob, agent=demo_agents["calculator"])
    client = api_for(bob)

    answers = {
        **reads(client, alices_set, case_id),
        **writes(client, alices_set, case_id, session.id),
    }

    assert {k: a.status_code for k, a in answers.items()} == {k: 404 for k in answers}
    assert client.get("/api/evalsets/").json() == []
    assert EvalSet.objects.get().name == "private"
    assert EvalCase.objects.get().eval_id == "one"


def test_a_group_member_reads_and_exports_but_changes_nothing(
    alice, bob, api_for, alices_set, case_id, demo_agents
):
    team = Group.objects.create(name="team")
    team.user_set.add(alice, bob)
    EvalSet.objects.get().groups.add(team)
    session = create_session(user=bob, agent=demo_agents["calculator"])
    client = api_for(bob)

    read = reads(client, alices_set, case_id)
    written = writes(client, alices_set, case_id, session.id)

    assert {k: a.status_code for k, a in read.items()} == {k: 200 for k in read}
    assert {k: a.status_code for k, a in written.items()} == {k: 403 for k in written}
    assert EvalCase.objects.get().eval_id == "one"


def test_no_case_is_made_from_someone_elses_session(alice, bob, api_for, demo_agents):
    bobs_session = create_session(user=bob, agent=demo_agents["calculator"])
    client = api_for(alice)
    set_id = client.post("/api/evalsets/", {"name": "mine"}, format="json").json()["id"]

    answer = client.post(
        f"/api/evalsets/{set_id}/cases/from-session/",
        {"session": bobs_session.id},
        format="json",
    )

    assert answer.status_code == 404
    assert answer.json() == {"detail": "No such session."}
    assert not EvalCase.objects.exists()


def test_staff_change_any_set(make_user, api_for, alices_set):
    root = make_user("root", is_staff=True)

    answer = api_for(root).patch(
        f"/api/evalsets/{alices_set}/", {"description": "Reviewed."}, format="json"
    )

    assert answer.status_code == 200
    assert answer.json()["owner"]["username"] == "alice"
