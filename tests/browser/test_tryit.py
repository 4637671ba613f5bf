"""The Access page's "Try a tool" form, in a real browser: its fields come from the
tool's JSON schema, a run shows its status, attempts, time and result, and a
refusal says why (POST /api/tools/{name}/invoke/)."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_try_a_tool_from_a_form_built_from_its_schema(sign_in, api, shoot):
    admin = sign_in("admin")
    admin.goto("/staff/access/")
    panel = admin.locator("#try-it")

    panel.locator("#try-tool").select_option("math.calculate")
    expression = panel.locator("#try-arg-expression")
    expect(expression).to_be_visible()
    expression.fill("2 * (3 + 4)")
    panel.get_by_role("button", name="Run").click()

    outcome = panel.locator("#try-outcome")
    expect(outcome).to_have_attribute("data-status", "ok")
    expect(outcome.locator('[data-field="status"]')).to_have_text("ok")
    expect(outcome.locator('[data-field="attempts"]')).to_have_text("1")
    expect(outcome.locator('[data-field="duration"]')).to_contain_text("ms")
    expect(outcome.locator('[data-field="result"]')).to_contain_text('"result": 14')
    shoot(admin, "access-try-a-tool")
    calls = api("admin").get("/api/tool-calls/?tool=math.calculate").json()
    assert calls[0]["args"] == {"expression": "2 * (3 + 4)"}
    assert calls[0]["status"] == "ok"

    # Numbers and required fields, from the schema; a refusal says why.
    panel.locator("#try-tool").select_option(
        "simple_math_toolset.calculator_add_numbers"
    )
    first = panel.locator(
        '[data-arg][data-kind="integer"], [data-arg][data-kind="number"]'
    )
    expect(first.first).to_have_attribute("type", "number")
    panel.get_by_role("button", name="Run").click()
    expect(outcome).to_have_attribute("data-status", "error")
    expect(outcome.locator('[data-field="status"]')).to_have_text("refused (400)")
    expect(outcome.locator('[data-field="error"]')).to_contain_text("Invalid arguments")

    panel.locator("#try-tool").select_option("shell.run_command")
    panel.locator("#try-arg-command").fill("ls")
    panel.get_by_role("button", name="Run").click()
    expect(outcome.locator('[data-field="status"]')).to_have_text("refused (403)")
    expect(outcome.locator('[data-field="error"]')).to_contain_text(
        "not available to you"
    )
