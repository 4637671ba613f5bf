"""An ADK 2.x workflow's session as a reader meets it: each node's output under its
path, live; a node asking a person waits, and the answer resumes the workflow; a
tool node needing approval waits for it in its card, and approved there, runs."""

import pytest
from playwright.sync_api import expect

from tests.browser.pages import finished_runs, send, start_session

pytestmark = pytest.mark.browser

NODE = "#timeline .node-output"
ASK_CARD = '.card.call[data-tool="adk_request_input"]'
SHOUT = "forecast_flow.shout"


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
    [_] = api("alice").get(f"/api/sessions/{session}/calls/").json()
    # Answered in the node's card, as a long-running call's result.
    card = page.locator(ASK_CARD)
    card.get_by_text("Answer with any JSON result").click()
    card.get_by_label("Result of adk_request_input as a JSON object").fill(
        '{"result": "Ada"}'
    )
    card.get_by_role("button", name="Send result").click()
    welcome = page.locator(NODE).filter(has_text="greeter › welcome")
    expect(welcome).to_contain_text("Welcome, Ada!")


@pytest.fixture
def shout_needs_approval(api):
    """forecast_flow's tool node `shout` needs approval (its requester may give it),
    as long as the test runs."""
    admin = api("admin")
    body = {"requires_approval": True, "requester_may_approve": True}
    marked = admin.patch(f"/api/tools/{SHOUT}/", json=body)
    assert marked.status_code == 200, marked.text
    yield
    admin.patch(f"/api/tools/{SHOUT}/", json={"requires_approval": False})


def test_a_tool_node_needing_approval_is_approved_in_its_card_and_runs(
    sign_in, shout_needs_approval, shoot
):
    page = sign_in("alice")
    start_session(page, "forecast_flow")

    send(page, "weather please")

    request = page.locator(ASK_CARD).locator('.request-part[data-kind="approval"]')
    approve = request.get_by_role("button", name="Approve shout")
    expect(approve).to_be_enabled()
    expect(page.locator(NODE).filter(has_text="forecast_flow › shout")).to_have_count(0)
    shoot(page, "workflow-tool-node-approval")
    approve.click()

    shouted = page.locator(NODE).filter(has_text="forecast_flow › shout")
    expect(shouted).to_contain_text("FORECAST DONE")
    expect(request).to_have_attribute("data-status", "approved")



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
