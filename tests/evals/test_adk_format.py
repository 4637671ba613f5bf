"""ADK compatibility: a set exported here loads with ADK's own loader, and a set
written for `adk eval` imports here; a malformed file stores nothing."""

import json
from pathlib import Path

import pytest
from google.adk.evaluation.eval_case import get_all_tool_calls_with_responses
from google.adk.evaluation.eval_config import (
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)
from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file

from evals.models import EvalCase, EvalSet

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parent / "fixtures"
EVALSET = json.loads((FIXTURES / "home_automation.evalset.json").read_text())
TEST_CONFIG = json.loads((FIXTURES / "test_config.json").read_text())
INVOCATION = {
    "user_content": {"role": "user", "parts": [{"text": "add 2 and 3"}]},
    "final_response": {"role": "model", "parts": [{"text": "5"}]},
    "intermediate_data": {
        "tool_uses": [{"id": "c1", "name": "add", "args": {"a": 2, "b": 3}}],
        "tool_responses": [{"id": "c1", "name": "add", "response": {"result": 5}}],
    },
}


def import_file(client, body):
    return client.post("/api/evalsets/import/", body, format="json")


def test_a_set_written_for_adk_eval_imports_with_its_cases_and_criteria(alice, api_for):
    answer = import_file(
        api_for(alice), {"evalset": EVALSET, "test_config": TEST_CONFIG}
    )

    assert answer.status_code == 201, answer.content
    imported = answer.json()
    assert imported["name"] == "Lights on and off"
    assert imported["case_count"] == 2
    assert imported["criteria"] == {
        "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"},
        "response_match_score": 0.7,
    }
    first, second = EvalCase.objects.order_by("position")
    assert first.eval_id == "eval_case_id"
    call = first.conversation[0]["intermediate_data"]["tool_uses"][0]
    assert call["args"]["device_id"] == "device_2"
    assert second.session_input["state"] == {"user:units": "metric"}
    assert len(second.conversation) == 2


def test_an_export_loads_with_adks_own_loader_and_config(alice, api_for, tmp_path):
    client = api_for(alice)
    made = client.post(
        "/api/evalsets/",
        {
            "name": "Math checks",
            "description": "Adds.",
            "criteria": {
                "tool_trajectory_avg_score": {
                    "threshold": 0.9,
                    "match_type": "ANY_ORDER",
                }
            },
        },
        format="json",
    ).json()
    client.post(
        f"/api/evalsets/{made['id']}/cases/",
        {
            "eval_id": "adds",
            "conversation": [INVOCATION],
            "session_input": {"state": {"x": 1}},
            "expectations": [{"kind": "held_for_approval", "tool": "add"}],
        },
        format="json",
    )

    exported = client.get(f"/api/evalsets/{made['id']}/export/")
    config = client.get(f"/api/evalsets/{made['id']}/export/test-config/")

    assert exported.status_code == config.status_code == 200
    assert 'filename="Math_checks.evalset.json"' in exported["Content-Disposition"]
    path = tmp_path / "Math_checks.evalset.json"
    path.write_bytes(exported.content)
    (tmp_path / "test_config.json").write_bytes(config.content)
    loaded = load_eval_set_from_file(str(path), "Math_checks")
    assert loaded.eval_set_id == "Math_checks"
    [case] = loaded.eval_cases
    assert case.eval_id == "adds"
    assert case.session_input.state == {"x": 1}
    [(call, result)] = get_all_tool_calls_with_responses(
        case.conversation[0].intermediate_data
    )
    assert (call.name, call.args, result.response) == (
        "add",
        {"a": 2, "b": 3},
        {"result": 5},
    )
    criteria = get_evaluation_criteria_or_default(str(tmp_path / "test_config.json"))
    [metric, *_informational] = get_eval_metrics_from_config(criteria)
    assert (metric.metric_name, metric.threshold) == ("tool_trajectory_avg_score", 0.9)


def test_an_exported_set_imports_again_as_it_was(alice, api_for):
    client = api_for(alice)
    first = import_file(client, {"evalset": EVALSET}).json()
    exported = json.loads(client.get(f"/api/evalsets/{first['id']}/export/").content)

    again = import_file(client, {"evalset": exported, "name": "copy"})

    assert again.status_code == 201, again.content
    cases = EvalSet.objects.get(pk=again.json()["id"]).cases.order_by("position")
    originals = EvalSet.objects.get(pk=first["id"]).cases.order_by("position")
    assert [c.conversation for c in cases] == [c.conversation for c in originals]
    assert [c.session_input for c in cases] == [c.session_input for c in originals]


def test_a_malformed_file_names_each_bad_case_and_stores_nothing(alice, api_for):
    broken = json.loads(json.dumps(EVALSET))
    del broken["eval_cases"][0]["conversation"][0]["userContent"]
    broken["eval_cases"][1]["conversation"] = "not a list"
    broken["eval_cases"].append({"evalId": "eval_case_id", "conversation": []})

    answer = import_file(api_for(alice), {"evalset": broken})

    assert answer.status_code == 400
    problems = answer.json()["evalset"]
    assert len(problems) == 3
    assert problems[0].startswith("case 0 (eval_case_id): conversation.0.userContent")
    assert problems[1].startswith("case 1 (weather_then_lights): conversation")
    assert problems[2] == "case 2 (eval_case_id): another case has this eval_id"
    assert not EvalSet.objects.exists()


@pytest.mark.parametrize(
    "body, field",
    [
        ({"evalset": []}, "evalset"),
        ({"evalset": {"eval_set_id": "x"}}, "evalset"),
        ({"evalset": EVALSET, "test_config": {"criteria": {"nope": 1}}}, "test_config"),
        (
            {
                "evalset": EVALSET,
                "test_config": {"criteria": {"response_match_score": 2}},
            },
            "test_config",
        ),
        ({"test_config": TEST_CONFIG}, "evalset"),
    ],
)
def test_a_file_that_is_not_what_adk_reads_is_a_400(alice, api_for, body, field):
    answer = import_file(api_for(alice), body)

    assert answer.status_code == 400, answer.content
    assert field in answer.json()
    assert not EvalSet.objects.exists()
