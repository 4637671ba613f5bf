"""Waiting for a person, in real browsers: alice asks in her session, a manager (bob)
decides from his inbox in another browser context without reloading, the navigation's
count goes up and down live, an undecided request expires with nobody acting, and a
rejection's comment reaches the requester and the audit.

The catalog marks the calculator's adder as needing a manager's approval (the access
page's settings, or the API); each test puts it back as it was.
"""

import re
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import finished_runs, send, start_session
from tests.live.server import ROOT

pytestmark = pytest.mark.browser

ADDER = "simple_math_toolset.calculator_add_numbers"
ADDER_CARD = '.card.call[data-tool="calculator_add_numbers"]'
MAKE_MANAGERS = (
    "from django.contrib.auth.models import Group, User; "
    "Group.objects.get_or_create(name='managers')[0].user_set.add("
    "User.objects.get(username='bob'))"
)
NO_APPROVAL = {
    "requires_approval": False,
    "approver_group": None,
    "approval_timeout": None,
    "requester_may_approve": False,
}
# A browser's Notification that records what the page shows; the permission starts
# unasked ("default") and is granted when the page asks, from the user's click.
NOTIFICATIONS = """
(() => {
  const key = "fake-notification-permission";
  window.__notes = [];
  class FakeNotification {
    constructor(title, options) { window.__notes.push({ title, ...(options || {}) }); }
    addEventListener() {}
    static get permission() { return sessionStorage.getItem(key) || "default"; }
    static async requestPermission() {
      sessionStorage.setItem(key, "granted");
      return "granted";
    }
  }
  window.Notification = FakeNotification;
})();
"""


@pytest.fixture(scope="module")
def managers(live_env) -> None:
    """A `managers` group, with bob in it."""
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", MAKE_MANAGERS],
        cwd=ROOT,
        env=dict(live_env),
        check=True,
        capture_output=True,
    )


@pytest.fixture
def adder_needs_approval(api, managers) -> Iterator[httpx.Client]:
    """The adder as the catalog leaves it after the test: no approval. Yields admin."""
    admin = api("admin")
    yield admin
    admin.patch(f"/api/tools/{ADDER}/", json=NO_APPROVAL)


def mark_adder(admin: httpx.Client, **settings) -> None:
    body = {"requires_approval": True, "approver_group": "managers", **settings}
    marked = admin.patch(f"/api/tools/{ADDER}/", json=body)
    assert marked.status_code == 200, marked.text


def inbox_count(page: Page):
    return page.locator("#inbox-count")


def waiting_card(page: Page):
    return page.locator("#waiting-list .card.request").filter(
        has_text="calculator_add_numbers"
    )


def test_a_manager_decides_from_the_inbox_live_and_the_badge_counts(
    sign_in, adder_needs_approval, shoot
):
    admin = sign_in("admin")
    admin.goto("/staff/access/")
    admin.fill("#matrix-filter", "calculator_add")
    opener = admin.locator(f'.approval-summary[data-tool="{ADDER}"]')
    expect(opener).to_have_text("no approval")
    opener.click()
    settings = admin.get_by_role("dialog", name=f"Approval of {ADDER}")
    settings.get_by_label("Every call waits for a person's approval").check()
    settings.get_by_label("Who decides").select_option("managers")
    shoot(admin, "access-approval-settings")
    settings.get_by_role("button", name="Save").click()
    expect(admin.locator("#toasts")).to_contain_text("calls wait for approval")
    expect(settings).to_be_hidden()
    expect(opener).to_have_text("approval: managers")

    bob = sign_in("bob")
    bob.context.add_init_script(NOTIFICATIONS)
    bob.goto("/inbox/")
    expect(bob.locator("#requests-waiting .state.empty")).to_contain_text(
        "Nothing is waiting for you"
    )
    expect(inbox_count(bob)).to_be_hidden()
    bob.get_by_role("button", name="Notify me").click()
    expect(bob.locator("#notify-state")).to_contain_text("Notifications are on")
    bob.evaluate("window.__sameDocument = true")

    alice = sign_in("alice")
    session_id = start_session(alice, "calculator")
    alice.evaluate("window.__sameDocument = true")
    send(alice, "add 2 and 3")

    card = alice.locator(ADDER_CARD)
    request = card.locator('.request-box[data-kind="approval"]')
    expect(card).to_have_attribute("data-status", "awaiting")
    expect(request.locator(".waits")).to_contain_text(
        "Waits for a member of managers or staff (not alice)"
    )
    expect(request.get_by_role("button")).to_have_count(0)
    expect(alice.locator("#timeline li.kind-run_finished .divider")).to_have_text(
        re.compile("Waiting for approval", re.I)
    )
    expect(alice.locator("#timeline .card")).to_have_count(1)
    assert "FunctionResponse" not in alice.locator("#timeline").inner_text()
    shoot(alice, "requests-alice-waits")

    # Bob's inbox and count hear it, and his browser notifies him.
    expect(inbox_count(bob)).to_have_text("1")
    item = waiting_card(bob)
    expect(item.locator(".request-title")).to_have_text(
        "Approve a call of calculator_add_numbers"
    )
    expect(item).to_contain_text("asked by alice")
    expect(item.locator(".args")).to_contain_text("3")
    assert bob.evaluate("window.__notes.map(n => n.title)") == [
        "Approve a call of calculator_add_numbers"
    ]
    shoot(bob, "requests-inbox-live")

    mine = alice.context.new_page()
    mine.goto("/")
    row = mine.locator(f'#sessions li[data-session="{session_id}"]')
    expect(row).to_have_attribute("data-status", "waiting")
    expect(row).to_contain_text("waiting for approval")
    mine.goto("/inbox/#mine")
    asked = mine.locator("#mine-list .card.request").first
    expect(asked).to_have_attribute("data-status", "pending")
    expect(asked.get_by_role("button")).to_have_count(0)

    item.get_by_label("Comment (optional)").fill("Fine, within budget.")
    item.get_by_role("button", name="Approve calculator_add_numbers").click()
    expect(bob.locator("#toasts")).to_contain_text("Approved calculator_add_numbers")
    expect(waiting_card(bob)).to_have_count(0)
    expect(inbox_count(bob)).to_be_hidden()

    expect(request).to_have_attribute("data-status", "approved")
    expect(request.locator(".approval-outcome")).to_contain_text("Approved by bob")
    expect(request.locator(".request-comment")).to_contain_text("Fine, within budget.")
    expect(card).to_have_attribute("data-status", "ok")
    expect(card.locator(".call-result")).to_contain_text("5")
    expect(finished_runs(alice).last).to_contain_text(
        re.compile("resumes the run of", re.I)
    )
    expect(asked).to_have_attribute("data-status", "approved")
    expect(asked.locator(".request-comment")).to_contain_text("Fine, within budget.")
    assert alice.evaluate("window.__sameDocument") is True, "alice's page reloaded"
    assert bob.evaluate("window.__sameDocument") is True, "bob's page reloaded"
    shoot(alice, "requests-alice-approved")
    shoot(mine, "requests-my-requests")


def test_an_undecided_request_expires_with_nobody_acting(
    sign_in, api, adder_needs_approval, shoot
):
    mark_adder(adder_needs_approval, approval_timeout=4)
    bob = sign_in("bob")
    bob.goto("/inbox/")
    expect(inbox_count(bob)).to_be_hidden()
    alice = api("alice")
    session = alice.post("/api/sessions/", json={"agent": "calculator"}).json()
    asked = alice.post(
        f"/api/sessions/{session['id']}/messages/?wait=1",
        json={"text": "add 1 and 1"},
    )
    assert asked.status_code == 200, asked.text

    item = waiting_card(bob)
    expect(item.locator(".expiry")).to_contain_text("expires")
    expect(inbox_count(bob)).to_have_text("1")
    # Nobody answers: the server expires it on time, and the inbox hears it.
    expect(item).to_have_count(0)
    expect(inbox_count(bob)).to_be_hidden()

    page = sign_in("alice")
    page.goto(f"/sessions/{session['id']}/")
    request = page.locator(f'{ADDER_CARD} .request-box[data-kind="approval"]')
    expect(request).to_have_attribute("data-status", "expired")
    expect(request.locator(".approval-outcome")).to_contain_text("Expired")
    expect(request.get_by_role("button")).to_have_count(0)
    shoot(page, "requests-expired")


def test_a_rejection_shows_its_comment_and_the_audit_says_rejected(
    sign_in, api, adder_needs_approval, shoot
):
    mark_adder(adder_needs_approval, requester_may_approve=True)
    alice = api("alice")
    session = alice.post("/api/sessions/", json={"agent": "calculator"}).json()
    asked = alice.post(
        f"/api/sessions/{session['id']}/messages/?wait=1",
        json={"text": "add 40 and 2"},
    )
    assert asked.status_code == 200, asked.text
    page = sign_in("alice")
    page.goto(f"/sessions/{session['id']}/")
    card = page.locator(ADDER_CARD)
    request = card.locator('.request-box[data-kind="approval"]')
    expect(request.locator(".waits")).to_contain_text("managers")
    # The catalog lets the requester decide her own calls, and always allow them.
    expect(request.locator(".waits")).to_contain_text("or alice (the requester)")
    expect(
        request.get_by_label(
            "Always allow calculator_add_numbers for alice in this session"
        )
    ).not_to_be_checked()
    expect(
        request.get_by_role("button", name="Approve calculator_add_numbers")
    ).to_be_enabled()

    bob = sign_in("bob")
    bob.goto("/inbox/")
    item = waiting_card(bob).filter(has_text="40")
    item.get_by_label("Comment (optional)").fill("Not this month, sorry.")
    item.get_by_role("button", name="Reject calculator_add_numbers").click()
    expect(item).to_have_count(0)

    expect(request).to_have_attribute("data-status", "rejected")
    expect(request.locator(".approval-outcome")).to_contain_text("Rejected by bob")
    expect(request.locator(".request-comment")).to_contain_text(
        "Not this month, sorry."
    )
    expect(card).to_have_attribute("data-status", "error")
    expect(request.get_by_role("button")).to_have_count(0)
    shoot(page, "requests-rejected")

    admin = sign_in("admin")
    admin.goto("/staff/audit/")
    row = admin.locator("#audit-table tbody tr").filter(has_text='{"a":40,"b":2}')
    expect(row).to_contain_text("calculator_add_numbers")
    expect(row).to_contain_text("rejected")
    expect(row).to_contain_text("bob")
    shoot(admin, "requests-audit-rejected")
