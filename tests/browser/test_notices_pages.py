"""Notices in the browser: alice chooses what reaches her by mail from the inbox;
staff read the delivery log, a failing webhook's attempts and error included."""

import time

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_alice_turns_approval_mail_off_and_calls_mail_on_in_the_inbox(sign_in, api):
    alice = sign_in("alice")
    alice.goto("/inbox/")
    alice.get_by_text("Tell me by mail or webhook").click()
    approvals = alice.get_by_label("Mail: Approvals I may decide")
    expect(approvals).to_be_checked()
    expect(alice.get_by_label("Mail: Results I may post")).not_to_be_checked()

    approvals.uncheck()
    expect(alice.locator("#toasts")).to_contain_text("Saved.")
    alice.get_by_label("Mail: Results I may post").check()
    expect(alice.get_by_label("Mail: Results I may post")).to_be_enabled()

    chosen = api("alice").get("/api/notices/preferences/").json()
    assert chosen["approval"]["mail"] is False
    assert chosen["call"]["mail"] is True
    alice.reload()
    alice.get_by_text("Tell me by mail or webhook").click()
    expect(alice.get_by_label("Mail: Approvals I may decide")).not_to_be_checked()


def test_staff_read_a_failing_webhooks_attempts_in_the_delivery_log(
    sign_in, api, shoot
):
    staff = api("admin")
    made = staff.post(
        "/api/notices/webhooks/",
        json={
            "name": "nobody-listens",
            "url": "http://127.0.0.1:9/hook",
            "kinds": ["approval"],
        },
    )
    assert made.status_code == 201, made.text
    try:
        alice = api("alice")
        session = alice.post("/api/sessions/", json={"agent": "bank"}).json()["id"]
        alice.post(
            f"/api/sessions/{session}/messages/?wait=1",
            json={"text": 'wire 500 to "bob"'},
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            rows = staff.get("/api/notices/deliveries/?status=queued").json()
            if any(r["address"] == "nobody-listens" and r["attempts"] for r in rows):
                break
            time.sleep(0.2)

        admin = sign_in("admin")
        admin.goto("/staff/notices/")
        expect(admin.get_by_role("link", name="Notices")).to_have_attribute(
            "aria-current", "page"
        )
        row = admin.locator("#notices-table tbody tr", has_text="nobody-listens")
        expect(row.first).to_contain_text("could not be reached")
        admin.select_option("select[name=status]", "sent")
        admin.get_by_role("button", name="Apply").click()
        expect(
            admin.locator("#notices-table tbody tr", has_text="nobody-listens")
        ).to_have_count(0)
        shoot(admin, "notices")
    finally:
        staff.delete(f"/api/notices/webhooks/{made.json()['id']}/")
