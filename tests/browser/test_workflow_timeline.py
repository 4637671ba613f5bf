"""An ADK 2.x workflow's session as a reader meets it: each node's output under its
path, live; a node asking a person waits, and the answer resumes the workflow."""

import pytest
from playwright.sync_api import expect

from tests.browser.pages import finished_runs, send, start_session

pytestmark = pytest.mark.browser

NODE = "#timeline .node-output"
ASK_CARD = '.card.call[data-tool="adk_request_input"]'


def test_each_nodes_output_shows_under_its_path(sign_in, shoot):
    page = sign_in("alice")
    start_session(page, "triage")

    send(page, "my bill is wrong")

    expect(finished_runs(page)).to_have_count(1)
    summary = page.locator(NODE).filter(has_text="triage › report › summarize")
    expect(summary).to_contain_text("summary of checks: account ok, history ok")
    joined = page.locator(NODE).filter(has_text="triage › both_checks")
    expect(joined).to_contain_text("check_account")
    expect(page.locator("#timeline .error-box")).to_have_count(0)
    # The fan-out's two nodes ran side by side, not as tools of anything.
    nested = page.locator("#timeline .nested-by")
    expect(nested).to_have_count(2)
    labels = sorted(nested.all_inner_texts())
    assert labels == [
        "check_account runs in parallel",
        "check_history runs in parallel",
    ]
    shoot(page, "workflow-nodes")


def test_a_node_asking_a_person_waits_and_its_answer_resumes_the_workflow(sign_in, api):
    page = sign_in("alice")
    session = start_session(page, "greeter")

    send(page, "hello")

    expect(page.locator(ASK_CARD)).to_be_visible()
    expect(finished_runs(page)).to_have_count(1)
    [asked] = api("alice").get(f"/api/sessions/{session}/calls/").json()
    answered = api("alice").post(
        f"/api/sessions/{session}/function-responses/",
        json={"call_id": asked["call_id"], "response": {"result": "Ada"}},
    )
    assert answered.status_code in (200, 202), answered.text
    welcome = page.locator(NODE).filter(has_text="greeter › welcome")
    expect(welcome).to_contain_text("Welcome, Ada!")


def test_a_nodes_output_shows_with_the_state_it_changed(sign_in):
    # count_up returns Event(output=n, state={"count": n}): a state change that is
    # also the node's output, each round of the loop.
    page = sign_in("alice")
    start_session(page, "counter")

    send(page, "sheep")

    expect(finished_runs(page)).to_have_count(1)
    rounds = page.locator(NODE).filter(has_text="counter › count_up")
    expect(rounds).to_have_count(3)
    assert [text.split()[-1] for text in rounds.all_inner_texts()] == ["1", "2", "3"]
    told = page.locator(NODE).filter(has_text="counter › tell_count")
    expect(told).to_contain_text("sheep: counted to 3")
