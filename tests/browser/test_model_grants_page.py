"""Model grants and the model picker, in the browser: staff deny a model to a user
on the Models page (a bad name refused next to its field); an agent built with
model choices offers alice a picker of those granted to her; the next turn runs
on her pick; a deny added while she works stops her next turn with why; an agent
with no choices shows no picker."""

import uuid

import pytest
from playwright.sync_api import expect

from tests.browser.pages import finished_runs, send

pytestmark = pytest.mark.browser

OWN = "offline/demo"


def test_staff_grant_models_and_alice_picks_among_those_granted(sign_in, api, shoot):
    tag = uuid.uuid4().hex[:6]
    second, third = f"offline/second-{tag}", f"offline/third-{tag}"
    name = f"picker-{tag}"
    staff = api("admin")
    created = staff.post(
        "/api/agents/",
        json={
            "name": name,
            "instruction": "Answer.",
            "model": OWN,
            "model_choices": [second, third],
        },
    )
    assert created.status_code == 201, created.text
    try:
        admin = sign_in("admin")
        admin.goto("/staff/models/")
        admin.select_option("#grant-subject-kind", "user")
        admin.fill("#grant-subject", "nobody-at-all")
        admin.fill("#grant-model", second)
        admin.get_by_role("button", name="Add grant").click()
        expect(admin.locator("#grant-subject-error")).to_contain_text(
            "username=nobody-at-all does not exist"
        )
        admin.fill("#grant-subject", "alice")
        admin.fill("#grant-model", "nolab/x")
        admin.get_by_role("button", name="Add grant").click()
        expect(admin.locator("#grant-model-error")).to_contain_text(
            "No model connection is named nolab"
        )
        admin.fill("#grant-model", second)
        admin.select_option("#grant-effect", "deny")
        admin.get_by_role("button", name="Add grant").click()
        row = admin.locator("#grant-rows tr", has_text=second)
        expect(row).to_contain_text("user alice")
        expect(row).to_contain_text("deny")
        shoot(admin, "model-grants")

        session = api("alice").post("/api/sessions/", json={"agent": name}).json()["id"]
        alice = sign_in("alice")
        alice.goto(f"/sessions/{session}/")
        picker = alice.locator("#model-picker-select")
        expect(picker).to_be_visible()
        options = picker.locator("option").all_inner_texts()
        assert options == [f"{OWN} (the agent's own)", third]  # second: denied
        picker.select_option(third)
        expect(alice.locator("#toasts")).to_contain_text(
            f"The next turn runs on {third}"
        )
        send(alice, "hello")
        expect(finished_runs(alice)).to_have_count(1)
        last = api("alice").get(f"/api/sessions/{session}/").json()["last_run"]
        run = api("alice").get(f"/api/runs/{last['id']}/").json()
        assert run["status"] == "succeeded"
        assert run["stats"]["model"] == third  # the model the turn ran on
        shoot(alice, "model-picker")

        admin.fill("#grant-subject", "alice")
        admin.fill("#grant-model", "offline/*")
        admin.select_option("#grant-effect", "deny")
        admin.get_by_role("button", name="Add grant").click()
        expect(admin.locator("#grant-rows tr", has_text="offline/*")).to_be_visible()
        send(alice, "hello again")
        expect(finished_runs(alice)).to_have_count(2)
        refusal = alice.locator("#timeline li.kind-error").last
        expect(refusal).to_contain_text("Stopped: the model is not granted to you")
        expect(refusal).to_contain_text(
            f"You may not use the model {third}: denied by grant"
        )
        expect(refusal).to_contain_text("(user alice on offline/*)")

        alice.goto("/")
        demo = api("alice").post("/api/sessions/", json={"agent": "weather_sentiment"})
        alice.goto(f"/sessions/{demo.json()['id']}/")
        expect(alice.locator("#live-status")).to_have_attribute("data-status", "live")
        expect(alice.locator("#model-picker")).to_be_hidden()
    finally:
        for grant in staff.get("/api/model-grants/").json():
            staff.delete(f"/api/model-grants/{grant['id']}/")
        staff.post(f"/api/agents/{name}/archive/")


def test_staff_make_a_connection_granted_only_and_its_models_need_a_grant(
    sign_in, api, shoot
):
    tag = uuid.uuid4().hex[:6]
    name = f"gated-{tag}"
    staff = api("admin")
    added = staff.post(
        "/api/providers/",
        json={
            "name": name,
            "kind": "openai_compatible",
            "base_url": "http://127.0.0.1:9/v1",
        },
    )
    assert added.status_code == 201, added.text
    try:
        admin = sign_in("admin")
        admin.goto("/staff/models/")
        admin.get_by_role("button", name=name).click()
        expect(admin.locator("#connection-detail")).to_contain_text(
            "Open to everyone unless a model grant denies them."
        )
        admin.get_by_role("button", name="Edit").click()
        admin.get_by_label("Granted only").check()
        admin.get_by_role("button", name="Save").click()
        expect(admin.locator("#connection-detail")).to_contain_text(
            "Granted only: its models need a model grant."
        )
        shoot(admin, "connection-granted-only")
        assert staff.get(f"/api/providers/{name}/").json()["granted_only"] is True
    finally:
        staff.delete(f"/api/providers/{name}/")
