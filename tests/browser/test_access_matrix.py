"""The Access page's matrix, in a real browser: groups first, a user found by name,
a grant with an expiry from the cell editor, and a tool's flags and policy override
in the tool editor with the effective policy shown."""

from datetime import datetime, timedelta

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

TOOL = "math.calculate"


def test_find_a_user_and_grant_a_toolset_until_a_date(sign_in, api, shoot):
    staff, bob = api("admin"), api("bob")
    admin = sign_in("admin")
    admin.goto("/staff/access/")
    heads = admin.locator("#access-matrix thead th[data-subject]")
    expect(heads.first).to_have_attribute("data-subject", "group:managers")

    admin.fill("#user-search", "bob")
    expect(admin.locator('th[data-subject="user:alice"]')).to_have_count(0)
    expect(admin.locator('th[data-subject="user:bob"]')).to_be_visible()
    expect(admin.locator('th[data-subject="group:managers"]')).to_be_visible()
    expect(admin.locator("#matrix-page")).to_contain_text("matching “bob”")

    cell = admin.locator('tr[data-target="toolset:sql"] td[data-subject="user:bob"]')
    cell.get_by_role(
        "button", name="Edit the grant of toolset sql for user bob"
    ).click()
    editor = admin.get_by_role("dialog", name="Grant: toolset sql for user bob")
    editor.get_by_label("allow").check()
    tomorrow = datetime.now() + timedelta(days=1)
    editor.get_by_label("Expires at").fill(tomorrow.strftime("%Y-%m-%dT%H:%M"))
    shoot(admin, "access-grant-until")
    editor.get_by_role("button", name="Save").click()

    expect(editor).to_be_hidden()
    expect(admin.locator("#toasts")).to_contain_text(
        "allow toolset sql for user bob until"
    )
    expect(cell.locator('button[data-effect="allow"]')).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(cell.locator(".decision")).to_contain_text("until")
    [grant] = staff.get("/api/grants/", params={"user": "bob", "toolset": "sql"}).json()
    expires = datetime.fromisoformat(grant["expires_at"]).astimezone()
    assert abs(expires.replace(tzinfo=None) - tomorrow) < timedelta(minutes=1)
    [sql] = [
        r for r in bob.get("/api/access/").json()["toolsets"] if r["name"] == "sql"
    ]
    assert sql["allowed"]

    # Back to inherit from the same editor: the grant is gone.
    cell.get_by_role(
        "button", name="Edit the grant of toolset sql for user bob"
    ).click()
    editor.get_by_label("inherit (no grant)").check()
    expect(editor.get_by_label("Expires at")).to_be_disabled()
    editor.get_by_role("button", name="Save").click()
    expect(cell.locator('button[data-effect="inherit"]')).to_have_attribute(
        "aria-pressed", "true"
    )
    assert not staff.get(
        "/api/grants/", params={"user": "bob", "toolset": "sql"}
    ).json()


def test_a_tools_flags_and_policy_override_with_the_effective_policy(
    sign_in, api, shoot
):
    staff = api("admin")
    before = staff.get(f"/api/tools/{TOOL}/").json()
    admin = sign_in("admin")
    admin.goto("/staff/access/")
    admin.fill("#matrix-filter", "calculate")
    try:
        admin.get_by_role("button", name=f"Edit {TOOL}").click()
        editor = admin.get_by_role("dialog", name=f"Tool {TOOL}")
        effective = editor.locator("#tool-effective-policy")
        expect(effective.locator('[data-key="timeout"]')).to_be_visible()
        editor.get_by_label("Risk").select_option("dangerous")
        editor.get_by_label("Policy override").fill('{"timeout": 7, "retries": 2}')
        editor.get_by_role("button", name="Save").click()

        expect(admin.locator("#toasts")).to_contain_text(
            f"Saved: {TOOL} (dangerous, enabled)"
        )
        timeout = effective.locator('[data-key="timeout"]')
        expect(timeout).to_have_attribute("data-overridden", "true")
        expect(timeout.locator("dd")).to_contain_text("7")
        expect(effective.locator('[data-key="retries"] dd')).to_contain_text("2")
        expect(effective.locator('[data-key="backoff"]')).to_have_attribute(
            "data-overridden", "false"
        )
        shoot(admin, "access-tool-editor")
        saved = staff.get(f"/api/tools/{TOOL}/").json()
        assert saved["risk"] == "dangerous"
        assert saved["policy"] == {"timeout": 7, "retries": 2}
        assert saved["effective_policy"]["timeout"] == 7

        # A bad override is refused readably; the kill switch from the editor.
        editor.get_by_label("Policy override").fill('{"timeout": "soon"}')
        editor.get_by_role("button", name="Save").click()
        expect(editor.get_by_role("alert")).to_contain_text("timeout")
        editor.get_by_label("Policy override").fill("")
        editor.get_by_label("Enabled").uncheck()
        editor.get_by_role("button", name="Save").click()
        expect(admin.locator("#toasts")).to_contain_text(
            f"Saved: {TOOL} (dangerous, disabled)"
        )
        row = admin.locator(f'tr[data-target="tool:{TOOL}"]')
        expect(row.locator(".switch")).to_have_attribute("aria-checked", "false")
        expect(row.locator(".badge.risk")).to_have_text("dangerous")

        # Its approval: the approval dialog of the row, from the editor.
        editor.get_by_role("button", name="Approval settings…").click()
        expect(admin.get_by_role("dialog", name=f"Approval of {TOOL}")).to_be_visible()
    finally:
        staff.patch(
            f"/api/tools/{TOOL}/",
            json={
                "risk": before["risk"],
                "enabled": before["enabled"],
                "policy": before["policy"],
            },
        )
