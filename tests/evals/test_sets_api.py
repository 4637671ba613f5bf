"""Eval sets and cases over the API: made, shared, changed, validated."""

import pytest
from django.contrib.auth.models import Group

from evals.models import EvalSet

pytestmark = pytest.mark.django_db

INVOCATION = {
    "userContent": {"role": "user", "parts": [{"text": "hi"}]},
    "finalResponse": {"role": "model", "parts": [{"text": "hello"}]},
}


@pytest.fixture
def team(alice, bob):
    group = Group.objects.create(name="team")
    group.user_set.add(alice, bob)
    return group


def test_a_set_shared_to_a_group_is_listed_for_its_members(alice, bob, team, api_for):
    made = api_for(alice).post(
        "/api/evalsets/",
        {"name": "smoke", "description": "Quick checks.", "groups": [team.pk]},
        format="json",
    )

    assert made.status_code == 201, made.content
    listed = api_for(bob).get("/api/evalsets/").json()
    assert [(s["name"], s["may_edit"]) for s in listed] == [("smoke", False)]
    assert listed[0]["groups"] == [{"id": team.pk, "name": "team"}]
    assert listed[0]["criteria"] == {
        "tool_trajectory_avg_score": 1.0,
        "response_match_score": 0.8,
    }


def test_sharing_to_a_group_you_are_not_in_is_refused(alice, api_for):
    other = Group.objects.create(name="other")

    answer = api_for(alice).post(
        "/api/evalsets/", {"name": "s", "groups": [other.pk]}, format="json"
    )

    assert answer.status_code == 400
    assert "groups" in answer.json()
    assert not EvalSet.objects.exists()


def test_a_name_you_already_use_is_refused(alice, api_for):
    client = api_for(alice)
    client.post("/api/evalsets/", {"name": "s"}, format="json")

    answer = client.post("/api/evalsets/", {"name": "s"}, format="json")

    assert answer.status_code == 400
    assert "name" in answer.json()


@pytest.mark.parametrize(
    "criteria, message",
    [
        ({"tool_trajectory_avg_scor": 1.0}, "Unknown metric"),
        ({"response_match_score": 1.5}, "from 0 to 1"),
        (
            {"tool_trajectory_avg_score": {"threshold": 1, "match_type": "SOME"}},
            "match_type",
        ),
        ({"tool_trajectory_avg_score": {"match_type": "EXACT"}}, "threshold is needed"),
        ({"response_match_score": {"threshold": 0.5, "colour": 1}}, "unknown option"),
        ({"tool_call_count_v1": 0.5}, "Unknown metric"),
        ({"response_match_score": True}, "threshold"),
    ],
)
def test_criteria_are_checked_against_adks_metrics(alice, api_for, criteria, message):
    answer = api_for(alice).post(
        "/api/evalsets/", {"name": "s", "criteria": criteria}, format="json"
    )

    assert answer.status_code == 400
    assert message in " ".join(answer.json()["criteria"])


def test_criteria_take_adks_options(alice, api_for):
    criteria = {
        "tool_trajectory_avg_score": {"threshold": 0.5, "matchType": "in_order"},
        "final_response_match_v2": {
            "threshold": 0.6,
            "judge_model_options": {"num_samples": 3},
        },
        "response_match_score": 1,
    }

    answer = api_for(alice).post(
        "/api/evalsets/", {"name": "s", "criteria": criteria}, format="json"
    )

    assert answer.status_code == 201, answer.content
    assert answer.json()["criteria"] == {
        "tool_trajectory_avg_score": {"threshold": 0.5, "match_type": "IN_ORDER"},
        "final_response_match_v2": {
            "threshold": 0.6,
            "judge_model_options": {"num_samples": 3},
        },
        "response_match_score": 1.0,
    }


def test_a_case_written_by_hand_is_kept_in_adks_shape(alice, api_for):
    client = api_for(alice)
    set_id = client.post("/api/evalsets/", {"name": "s"}, format="json").json()["id"]

    made = client.post(
        f"/api/evalsets/{set_id}/cases/",
        {
            "conversation": [INVOCATION],
            "session_input": {"state": {"plan": "pro"}},
            "expectations": [
                {"kind": "denied", "tool": "bank.transfer", "invocation": 0},
                {"kind": "budget_stops"},
            ],
        },
        format="json",
    )

    assert made.status_code == 201, made.content
    case = made.json()
    assert case["eval_id"] == "case_1"
    assert case["conversation"][0]["user_content"]["parts"] == [{"text": "hi"}]
    assert case["session_input"] == {
        "app_name": "",
        "user_id": "eval_user",
        "state": {"plan": "pro"},
    }
    assert case["expectations"][1] == {"kind": "budget_stops"}
    listed = client.get(f"/api/evalsets/{set_id}/cases/").json()
    assert [c["eval_id"] for c in listed] == ["case_1"]


def test_a_case_is_changed_and_deleted(alice, api_for):
    client = api_for(alice)
    set_id = client.post("/api/evalsets/", {"name": "s"}, format="json").json()["id"]
    url = f"/api/evalsets/{set_id}/cases/"
    case_id = client.post(url, {"conversation": [INVOCATION]}, format="json").json()[
        "id"
    ]

    changed = client.patch(f"{url}{case_id}/", {"eval_id": "greets"}, format="json")
    deleted = client.delete(f"{url}{case_id}/")

    assert changed.status_code == 200, changed.content
    assert changed.json()["eval_id"] == "greets"
    assert deleted.status_code == 204
    assert client.get(url).json() == []


@pytest.mark.parametrize(
    "body, field",
    [
        ({"conversation": []}, "conversation"),
        ({"conversation": [{"userContent": "hi"}]}, "conversation"),
        ({"conversation": [INVOCATION], "eval_id": "has space"}, "eval_id"),
        (
            {"conversation": [INVOCATION], "expectations": [{"kind": "denied"}]},
            "expectations",
        ),
        (
            {
                "conversation": [INVOCATION],
                "expectations": [{"kind": "maybe", "tool": "t"}],
            },
            "expectations",
        ),
        (
            {"conversation": [INVOCATION], "session_input": {"state": []}},
            "session_input",
        ),
    ],
)
def test_a_bad_case_is_a_400_naming_the_field(alice, api_for, body, field):
    client = api_for(alice)
    set_id = client.post("/api/evalsets/", {"name": "s"}, format="json").json()["id"]

    answer = client.post(f"/api/evalsets/{set_id}/cases/", body, format="json")

    assert answer.status_code == 400, answer.content
    assert field in answer.json()


def test_a_taken_eval_id_is_refused(alice, api_for):
    client = api_for(alice)
    set_id = client.post("/api/evalsets/", {"name": "s"}, format="json").json()["id"]
    url = f"/api/evalsets/{set_id}/cases/"
    client.post(url, {"conversation": [INVOCATION], "eval_id": "a"}, format="json")

    answer = client.post(
        url, {"conversation": [INVOCATION], "eval_id": "a"}, format="json"
    )

    assert answer.status_code == 400
    assert "eval_id" in answer.json()


def test_the_owner_renames_and_deletes_a_set(alice, api_for):
    client = api_for(alice)
    set_id = client.post("/api/evalsets/", {"name": "s"}, format="json").json()["id"]

    renamed = client.patch(
        f"/api/evalsets/{set_id}/", {"name": "renamed"}, format="json"
    )
    deleted = client.delete(f"/api/evalsets/{set_id}/")

    assert renamed.json()["name"] == "renamed"
    assert deleted.status_code == 204
    assert not EvalSet.objects.exists()
