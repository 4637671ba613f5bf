"""Approvals beyond yes or no, in a real browser (issue 45): alice changes the amount
of a transfer her bank agent asks her to approve, approves it from her Inbox, and
her session's timeline shows the asked and the approved arguments and the transfer
as it ran; then she rejects several transfers at once with one comment, and the
Inbox says what became of each. The cards pass axe.
"""

import json
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_accessibility import report, violations

pytestmark = pytest.mark.browser

WIRE = 'Wire money: 50 to "Bob"'


@pytest.fixture
def alice_api(api) -> Iterator[httpx.Client]:
    """alice's API client; her transfers still waiting are rejected afterwards."""
    alice = api("alice")
    yield alice
    for row in alice.get("/api/requests/?tool=wire_money").json():
        alice.post(f"/api/requests/{row['id']}/answer/", json={"approved": False})


def held_transfer(alice: httpx.Client) -> tuple[str, dict]:
    """A new bank session whose transfer waits for alice's approval, and its request."""
    session = alice.post("/api/sessions/", json={"agent": "bank"}).json()["id"]
    run = alice.post(f"/api/sessions/{session}/messages/?wait=1", json={"text": WIRE})
    assert run.json()["status"] == "waiting", run.text
    [request] = alice.get(f"/api/requests/?session={session}").json()
    return session, request


def card_of(page: Page, request: dict):
    card = page.locator(
        f'#requests-waiting .card.request[data-request-id="{request["id"]}"]'
    )
    expect(card).to_be_visible()
    return card


def test_alice_changes_the_amount_then_approves(sign_in, alice_api, shoot):
    session, request = held_transfer(alice_api)
    page = sign_in("alice")
    page.goto("/inbox/")
    card = card_of(page, request)

    card.get_by_text("Change the arguments, then approve").click()
    editor = card.locator("textarea.edit-arguments")
    edited = {**request["args"], "amount": 20.5}
    editor.fill(json.dumps(edited))
    assert not violations(page), report(
        {"inbox with an argument editor": violations(page)}
    )
    shoot(page, "inbox-edit-arguments")
    card.get_by_role("button", name="Approve wire_money").click()

    expect(page.locator("#toasts")).to_contain_text("Approved wire_money")
    expect(card).to_have_count(0)
    page.goto(f"/sessions/{session}/")
    call = page.locator('.card.call[data-tool="wire_money"]').last
    outcome = call.locator(".request-part .request-outcome, .approval-outcome").first
    expect(outcome).to_contain_text("Approved")
    approved = page.locator(".approved-args").first
    expect(approved).to_contain_text("20.5")
    expect(page.locator(".card.call")).to_contain_text(["Sent 20.5 dollars to Bob."])
    mine = alice_api.get(f"/api/requests/{request['id']}/").json()
    assert (mine["args"]["amount"], mine["approved_args"]["amount"]) == (50, 20.5)
    assert mine["args_edited_by"] == "alice"
    shoot(page, "timeline-edited-approval")


def test_alice_rejects_several_at_once_with_one_comment(sign_in, alice_api, shoot):
    held = [held_transfer(alice_api)[1] for _ in range(3)]
    page = sign_in("alice")
    page.goto("/inbox/")
    for request in held:
        card_of(page, request)
    bar = page.get_by_role("group", name="Decide many at once")
    expect(bar).to_be_visible()

    bar.get_by_label("Tool").select_option("wire_money")
    bar.get_by_label("Select all shown").check()
    shown = page.locator("#requests-waiting .bulk-pick-input:visible")
    expect(bar.locator("#bulk-count")).to_have_text(f"{shown.count()} selected")
    bar.get_by_label("Comment for each selected request").fill("no transfers today")
    assert not violations(page), report({"inbox deciding many": violations(page)})
    shoot(page, "inbox-decide-many")
    bar.get_by_role("button", name="Reject selected").click()

    results = page.get_by_role("list", name="What deciding many did")
    for request in held:
        item = results.locator(f'li[data-request-id="{request["id"]}"]')
        expect(item).to_contain_text("rejected")
    for request in held:
        expect(
            page.locator(f'#requests-waiting .card[data-request-id="{request["id"]}"]')
        ).to_have_count(0)
    decided = [alice_api.get(f"/api/requests/{r['id']}/").json() for r in held]
    assert {(d["status"], d["comment"]) for d in decided} == {
        ("rejected", "no transfers today")
    }
