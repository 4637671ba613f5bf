"""A case made in one click from a real session: its turns, calls with their
arguments and results, final answer, and the state at the start."""

import pytest

from agents.models import Run
from evals.models import EvalCase
from tests.agents.secret_agents import SECRETS
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def calc_session(alice, demo_agents, start_session, say):
    session = start_session(alice, "calculator")
    first = say(alice, session, "add 2 and 3")
    second = say(alice, session, "subtract 10 and 4")
    assert first["status"] == second["status"] == "succeeded"
    return session, first["id"], second["id"]


@pytest.fixture
def eval_set(alice, api_for):
    answer = api_for(alice).post("/api/evalsets/", {"name": "math"}, format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()["id"]


def from_session(client, set_id, body):
    return client.post(
        f"/api/evalsets/{set_id}/cases/from-session/", body, format="json"
    )


def test_one_turn_becomes_a_case_with_its_call_result_answer_and_state(
    alice, api_for, calc_session, eval_set
):
    session, _, second = calc_session

    answer = from_session(api_for(alice), eval_set, {"session": session, "run": second})

    assert answer.status_code == 201, answer.content
    case = answer.json()
    [invocation] = case["conversation"]
    assert invocation["user_content"]["parts"] == [{"text": "subtract 10 and 4"}]
    data = invocation["intermediate_data"]
    [call] = data["tool_uses"]
    assert (call["name"], call["args"]) == (
        "calculator_subtract_numbers",
        {"a": 10, "b": 4},
    )
    [result] = data["tool_responses"]
    assert result["id"] == call["id"]
    assert result["response"]["result"] == 6
    assert invocation["final_response"]["parts"][0]["text"]
    # The state as the second turn began: the first turn's addition had set it.
    assert case["session_input"]["state"] == {"last_math_operation": "addition"}
    assert case["session_input"]["app_name"] == "calculator"
    assert case["source_session"] == session


def test_the_whole_session_becomes_one_case_of_every_turn_from_the_start(
    alice, api_for, calc_session, eval_set
):
    session, _, _ = calc_session

    answer = from_session(api_for(alice), eval_set, {"session": session})

    assert answer.status_code == 201, answer.content
    case = answer.json()
    texts = [i["user_content"]["parts"][0]["text"] for i in case["conversation"]]
    assert texts == ["add 2 and 3", "subtract 10 and 4"]
    assert case["session_input"]["state"] == {}


def test_a_seq_range_takes_the_whole_turns_it_touches(
    alice, api_for, calc_session, eval_set, events_of
):
    session, first, _ = calc_session
    first_seqs = [
        e["seq"] for e in events_of(alice, session) if e["event"]["kind"] == "text"
    ]

    answer = from_session(
        api_for(alice),
        eval_set,
        {"session": session, "from_seq": first_seqs[0], "to_seq": first_seqs[0]},
    )

    assert answer.status_code == 201, answer.content
    [invocation] = answer.json()["conversation"]
    assert invocation["user_content"]["parts"] == [{"text": "add 2 and 3"}]
    assert invocation["intermediate_data"]["tool_uses"][0]["args"] == {"a": 2, "b": 3}


def test_two_cases_of_one_session_get_two_eval_ids(
    alice, api_for, calc_session, eval_set
):
    session, first, second = calc_session
    client = api_for(alice)

    one = from_session(client, eval_set, {"session": session, "run": first}).json()
    two = from_session(client, eval_set, {"session": session, "run": second}).json()

    assert one["eval_id"] != two["eval_id"]
    assert [c.eval_id for c in EvalCase.objects.order_by("position")] == [
        one["eval_id"],
        two["eval_id"],
    ]


def test_a_run_of_another_session_is_not_found(
    alice, api_for, calc_session, eval_set, start_session
):
    other = start_session(alice, "calculator")
    run = Run.objects.create(session_id=other, user=alice, text="x")
    session, _, _ = calc_session

    answer = from_session(
        api_for(alice), eval_set, {"session": session, "run": str(run.pk)}
    )

    assert answer.status_code == 404
    assert not EvalCase.objects.exists()


def test_a_bad_body_is_a_400_naming_the_field(alice, api_for, eval_set):
    answer = from_session(
        api_for(alice), eval_set, {"session": "s", "run": "x", "from_seq": 0}
    )

    assert answer.status_code == 400
    assert set(answer.json()) >= {"run", "from_seq"}


def test_a_case_and_its_export_hold_no_secret_the_session_met(
    vault_keeper, alice, api_for, start_session, say, eval_set
):
    session = start_session(alice, vault_keeper)
    say(alice, session, "keep and sign me in")
    later = say(alice, session, "keep and sign me in")
    client = api_for(alice)

    whole = from_session(client, eval_set, {"session": session})
    second = from_session(client, eval_set, {"session": session, "run": later["id"]})
    exported = client.get(f"/api/evalsets/{eval_set}/export/").content.decode()

    assert whole.status_code == second.status_code == 201, whole.content
    calls = whole.json()["conversation"][0]["intermediate_data"]["tool_uses"]
    assert {"keep_preferences", "sign_in"} <= {call["name"] for call in calls}
    state = second.json()["session_input"]["state"]
    assert state["user:preferences"]["database"]["db_password"] == "[redacted]"
    assert "[redacted]" in exported
    assert not [secret for secret in SECRETS if secret in exported]


def test_the_governance_outcomes_the_turns_met_become_expectations(
    alice, api_for, calc_session, eval_set
):
    session, _, _ = calc_session
    audited = ToolCall.objects.filter(session_id=session)
    # As governance audits a call it refused by a grant's condition, and one it held.
    audited.filter(tool_name="calculator_add_numbers").update(
        status="denied", access_rule="denied: b, outside the condition of grant 3"
    )
    audited.filter(tool_name="calculator_subtract_numbers").update(status="approved")

    answer = from_session(api_for(alice), eval_set, {"session": session})

    assert answer.status_code == 201, answer.content
    assert answer.json()["expectations"] == [
        {
            "kind": "refused_by_condition",
            "tool": "calculator_add_numbers",
            "invocation": 0,
        },
        {
            "kind": "held_for_approval",
            "tool": "calculator_subtract_numbers",
            "invocation": 1,
        },
    ]


def test_calls_governance_let_through_expect_nothing(
    alice, api_for, calc_session, eval_set
):
    session, _, _ = calc_session

    answer = from_session(api_for(alice), eval_set, {"session": session})

    assert ToolCall.objects.filter(session_id=session, status="ok").count() == 2
    assert answer.json()["expectations"] == []
