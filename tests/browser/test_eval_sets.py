"""Eval sets in the browser: a turn of a session added to a new set from the
session page, seen on /evals/ with its call; a malformed ADK file's errors named
per case; both fit a phone."""

import json
import uuid

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import PHONE

pytestmark = pytest.mark.browser


def test_a_turn_goes_to_a_new_set_from_the_session_page(sign_in, api, shoot):
    alice = api("alice")
    session = alice.post("/api/sessions/", json={"agent": "calculator"}).json()["id"]
    ran = alice.post(
        f"/api/sessions/{session}/messages/?wait=1", json={"text": "add 2 and 3"}
    )
    assert ran.json()["status"] == "succeeded", ran.text
    name = f"smoke-{uuid.uuid4().hex[:6]}"
    page = sign_in("alice")
    page.goto(f"/sessions/{session}/")

    page.get_by_role("button", name="Add to eval set").click()
    page.select_option("#eval-target-set", "new")
    page.fill("#eval-target-name", name)
    page.select_option("#eval-target-turn", label="The turn: add 2 and 3")
    page.locator(".eval-target-dialog").get_by_role("button", name="Add").click()
    expect(page.locator(".eval-target-dialog")).to_contain_text("Added as")
    page.get_by_role("link", name="Open the set").click()

    expect(page.locator("#set-title")).to_have_text(name)
    case = page.locator(".evals-case")
    expect(case).to_have_count(1)
    expect(case).to_contain_text("add 2 and 3")
    expect(case).to_contain_text("1 turn · 1 call")
    expect(page.get_by_role("link", name="Export .evalset.json")).to_be_visible()
    shoot(page, "eval-sets")


def test_a_malformed_file_is_refused_case_by_case(sign_in, tmp_path):
    broken = {
        "eval_set_id": "broken",
        "eval_cases": [{"evalId": "first", "conversation": [{"finalResponse": {}}]}],
    }
    path = tmp_path / "broken.evalset.json"
    path.write_text(json.dumps(broken))
    page = sign_in("alice")
    page.goto("/evals/")

    page.set_input_files("#import-evalset", str(path))
    page.get_by_role("button", name="Import", exact=True).click()

    expect(page.locator("#import-errors")).to_contain_text("case 0 (first)")
    expect(page.locator("#toasts")).to_contain_text("Nothing was imported")


def test_the_evals_page_and_the_session_button_fit_a_phone(sign_in, api):
    alice = api("alice")
    made = alice.post("/api/evalsets/", json={"name": f"p-{uuid.uuid4().hex[:6]}"})
    session = alice.post("/api/sessions/", json={"agent": "calculator"}).json()["id"]
    page = sign_in("alice", viewport=PHONE)

    page.goto(f"/evals/?set={made.json()['id']}")
    expect(page.locator("#set-title")).to_be_visible()
    evals_width = page.evaluate("document.documentElement.scrollWidth")
    page.goto(f"/sessions/{session}/")
    page.get_by_role("button", name="Add to eval set").click()
    expect(page.locator("#eval-target-turn")).to_be_visible()
    session_width = page.evaluate("document.documentElement.scrollWidth")

    assert (evals_width, session_width) == (PHONE["width"], PHONE["width"])
