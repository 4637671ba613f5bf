"""A condition on a tool's allow from the Access page's cell editor, in a real browser:
the server's field errors show by the field, a valid condition saves with what happens
outside it, the cell shows the condition in plain words, and the editor opens with it."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

TOOL = "math.calculate"


def test_an_allow_with_a_condition_from_the_cell_editor(sign_in, api, shoot):
    staff = api("admin")
    admin = sign_in("admin")
    admin.goto("/staff/access/")
    admin.fill("#user-search", "bob")
    expect(admin.locator('th[data-subject="user:bob"]')).to_be_visible()
    admin.fill("#matrix-filter", "calculate")
    cell = admin.locator(f'tr[data-target="tool:{TOOL}"] td[data-subject="user:bob"]')
    edit = cell.get_by_role(
        "button", name=f"Edit the grant of tool {TOOL} for user bob"
    )
    editor = admin.get_by_role("dialog", name=f"Grant: tool {TOOL} for user bob")
    condition = editor.get_by_label("Condition (JSON)")
    error = editor.locator("#cell-condition-error")
    try:
        edit.click()
        editor.get_by_label("allow").check()
        condition.fill("{not json")
        editor.get_by_role("button", name="Save").click()
        expect(error).to_contain_text("Not valid JSON")

        condition.fill('{"amount": {"maximum": 5}}')
        editor.get_by_role("button", name="Save").click()
        expect(error).to_contain_text("amount: no such argument of math.calculate")
        expect(editor).to_be_visible()
        assert not staff.get("/api/grants/", params={"user": "bob"}).json()

        condition.fill('{"expression": {"prefix": "1+"}}')
        editor.get_by_label("Outside the condition").select_option("approval")
        shoot(admin, "access-grant-condition")
        editor.get_by_role("button", name="Save").click()
        expect(editor).to_be_hidden()

        [grant] = staff.get("/api/grants/", params={"user": "bob"}).json()
        assert grant["condition"] == {"expression": {"prefix": "1+"}}
        assert grant["otherwise"] == "approval"
        assert grant["condition_text"]
        expect(cell.locator(".decision")).to_contain_text(grant["condition_text"])
        expect(cell.locator('button[data-effect="allow"]')).to_have_attribute(
            "aria-pressed", "true"
        )

        edit.click()
        expect(condition).to_have_value(
            '{\n  "expression": {\n    "prefix": "1+"\n  }\n}'
        )
        expect(editor.get_by_label("Outside the condition")).to_have_value("approval")
        expect(error).to_have_text("")
        editor.get_by_role("button", name="Cancel").click()
    finally:
        for grant in staff.get("/api/grants/", params={"user": "bob"}).json():
            staff.delete(f"/api/grants/{grant['id']}/")
