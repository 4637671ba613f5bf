"""The audit and the firehose read true, and whole, at 1280 px (issue 48 item 8).

- The audit's last column (arguments and result) is in sight without a sideways scroll.
- An approved call that then ran says who approved it, and when, under Decided.
- The inbox and the audit give the same reason for the same approval hold.
- The firehose names each event's user, and filters by username.

wanda, a user of her own, wires money with the demo bank: her rows are hers alone.
"""

import subprocess
import sys

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.widths import assert_no_overflow
from tests.live.server import ROOT

pytestmark = pytest.mark.browser

MAKE_WANDA = (
    "from django.contrib.auth.models import User; "
    "User.objects.filter(username='wanda').exists() "
    "or User.objects.create_user('wanda', password='wanda')"
)


@pytest.fixture(scope="module")
def wanda(live_env, server) -> httpx.Client:
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", MAKE_WANDA],
        cwd=ROOT,
        env=dict(live_env),
        check=True,
        capture_output=True,
    )
    token = server.token("wanda", "wanda")
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Token {token}"}, timeout=60
    ) as client:
        yield client


def wire(client: httpx.Client) -> tuple[str, dict]:
    """A session of wanda's whose transfer waits for approval, and its approval."""
    session = client.post("/api/sessions/", json={"agent": "bank"}).json()["id"]
    said = client.post(
        f"/api/sessions/{session}/messages/?wait=1", json={"text": 'wire 500 to "bob"'}
    )
    assert said.json()["waiting_for"] == "approval", said.text
    [approval] = client.get(f"/api/approvals/?session={session}").json()
    return session, approval


@pytest.fixture(scope="module")
def approved_and_ran(wanda, server) -> str:
    """wanda's transfer, approved by admin, then run."""
    session, approval = wire(wanda)
    token = server.token("admin", "admin")
    decided = httpx.post(
        f"{server.url}/api/approvals/{approval['id']}/decide/?wait=1",
        json={"approved": True},
        headers={"Authorization": f"Token {token}"},
        timeout=60,
    )
    assert decided.status_code == 200, decided.text
    return session


def audit(page: Page, query: str) -> None:
    page.goto(f"/staff/audit/?{query}")
    expect(page.locator("#audit-table tbody tr").first).to_be_visible()


def test_the_audits_last_column_is_in_sight_at_1280(sign_in, approved_and_ran):
    page = sign_in("admin")

    audit(page, "user=wanda")

    panel = page.locator("#audit").bounding_box()
    for cell in [
        page.locator("#audit-table th").last,
        page.locator("#audit-table tbody tr").first.locator("td").last,
    ]:
        box = cell.bounding_box()
        assert box["x"] + box["width"] <= panel["x"] + panel["width"] + 1, (
            f"{cell.inner_text()!r} is cut off: {box} in {panel}"
        )
    assert_no_overflow(page, "the audit")


def test_an_approved_call_that_ran_says_who_approved_it(sign_in, approved_and_ran):
    page = sign_in("admin")

    audit(page, "user=wanda&tool=wire_money&status=ok")

    ran = page.locator("#audit-table tbody tr[data-status='ok']").first
    expect(ran.locator("td.decided")).to_contain_text("by admin")


def test_the_inbox_and_the_audit_give_one_reason_for_a_hold(sign_in, wanda):
    wire(wanda)
    inbox = sign_in("wanda")
    inbox.goto("/inbox/")
    reason = inbox.locator(".request-reason").first
    expect(reason).to_be_visible()
    said = reason.inner_text().strip()

    page = sign_in("admin")
    audit(page, "user=wanda&status=awaiting_approval")
    held = page.locator("#audit-table tbody tr").first
    held.locator("details:has(summary:has-text('result')) summary").click()

    expect(held.locator("details[open] pre")).to_have_text(said)


def test_the_firehose_names_the_user_and_filters_by_username(sign_in, wanda, api):
    page = sign_in("admin")
    page.goto("/staff/firehose/")
    expect(page.locator('#live-status[data-status="live"]')).to_be_visible()
    page.fill("#firehose-filters input[name=user]", "wanda")
    with page.expect_websocket(lambda socket: "user=wanda" in socket.url):
        page.click("#firehose-filters button[type=submit]")
    expect(page.locator('#live-status[data-status="live"]')).to_be_visible()

    for client in [api("alice"), wanda]:
        session = client.post("/api/sessions/", json={"agent": "weather_sentiment"})
        said = client.post(
            f"/api/sessions/{session.json()['id']}/messages/?wait=1",
            json={"text": "weather in london?"},
        )
        assert said.status_code == 200, said.text

    rows = page.locator("#firehose-table tbody tr")
    expect(rows.first).to_be_visible()
    users = rows.locator("td.fh-user").all_inner_texts()
    assert users and set(users) == {"wanda"}, users
    expect(page.locator("#firehose-table th").nth(2)).to_have_text("User")
