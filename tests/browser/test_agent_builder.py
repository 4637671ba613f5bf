"""The agent builder (staff), in the browser: create an agent (a refused field says
why next to it; the instruction's Markdown previews), edit it, compare versions,
roll back, limit it to a group, save a draft and try it in a session marked Draft,
duplicate it (a taken name refused next to the field) and archive it; a user who is not staff gets no builder."""

import uuid

import pytest
from playwright.sync_api import expect

from tests.browser.test_accessibility import violations

pytestmark = pytest.mark.browser


def test_staff_build_version_try_and_archive_an_agent(sign_in, api, shoot):
    name = f"qa-{uuid.uuid4().hex[:6]}"
    admin = sign_in("admin")
    admin.goto("/staff/agents/")
    admin.get_by_role("button", name="New agent").click()
    admin.fill("#agent-name", name)
    admin.fill("#agent-instruction", "## Rules\n\nAnswer **briefly**.")
    expect(admin.locator("#agent-instruction-preview strong")).to_have_text("briefly")
    expect(admin.locator("#agent-instruction-preview h4")).to_have_text("Rules")
    assert not violations(admin), violations(admin)  # the open form, as axe reads it
    admin.fill("#agent-model", "no-such-model-family")
    admin.get_by_role("button", name="Save and publish").click()
    expect(admin.locator("#agent-model-error")).to_contain_text("No provider serves")

    admin.fill("#agent-model", "offline/demo")
    admin.get_by_role("button", name="Save and publish").click()
    card = admin.locator(f'.agent-card[data-agent="{name}"]')
    expect(card).to_contain_text("everyone signed in")

    group = f"team-{name}"
    assert api("admin").post("/api/groups/", json={"name": group}).status_code == 201
    admin.reload()
    card.get_by_role("button", name="Edit", exact=True).click()
    admin.fill("#agent-instruction", "## Rules\n\nAnswer in French.")
    admin.locator(f'#agent-groups input[value="{group}"]').check()
    admin.get_by_role("button", name="Save and publish").click()
    expect(admin.locator("#agent-form")).to_have_count(0)
    expect(card).to_contain_text(group)
    assert api("alice").get(f"/api/agents/{name}/").status_code == 404

    card.get_by_role("button", name="Versions").click()
    versions = admin.locator("#versions tbody tr")
    expect(versions).to_have_count(2)
    admin.locator('#versions input[name="compare"]').nth(0).check()
    admin.locator('#versions input[name="compare"]').nth(1).check()
    admin.get_by_role("button", name="Compare the two ticked").click()
    expect(admin.locator("#instruction-diff .added")).to_contain_text(
        "+Answer in French."
    )
    expect(admin.locator("#instruction-diff .removed")).to_contain_text(
        "-Answer **briefly**."
    )
    shoot(admin, "agent-versions")
    admin.get_by_role("button", name="Roll back to this").click()
    expect(admin.locator("#versions tbody tr")).to_have_count(3)
    assert api("admin").get(f"/api/agents/{name}/").json()["instruction"] == (
        "## Rules\n\nAnswer **briefly**."
    )

    card.get_by_role("button", name="Edit draft").click()
    admin.fill("#agent-instruction", "Draft: answer in German.")
    admin.get_by_role("button", name="Save draft").click()
    expect(card.locator(".badge", has_text="draft")).to_be_visible()
    card.get_by_role("button", name="Try draft").click()
    admin.wait_for_url("**/sessions/**")
    expect(admin.locator("#draft-badge")).to_have_text("Draft")
    assert api("admin").get(f"/api/agents/{name}/").json()["instruction"] == (
        "## Rules\n\nAnswer **briefly**."
    )

    admin.goto("/staff/agents/")
    card.get_by_role("button", name="Duplicate").click()
    admin.fill("#duplicate-name", name.upper())
    admin.locator("#duplicate-form").get_by_role("button", name="Duplicate").click()
    expect(admin.locator("#duplicate-name-error")).to_have_text(
        f"An agent is named {name} already: choose another name."
    )
    admin.fill("#duplicate-name", f"{name}-copy")
    admin.locator("#duplicate-form").get_by_role("button", name="Duplicate").click()
    expect(admin.locator("#duplicate-form")).to_have_count(0)
    copy = admin.locator(f'.agent-card[data-agent="{name}-copy"]')
    expect(copy).to_contain_text("Answer briefly.")  # its instruction, rendered
    card.get_by_role("button", name="Archive").click()
    expect(card.locator(".badge", has_text="archived")).to_be_visible()
    listed = [a["name"] for a in api("alice").get("/api/agents/").json()]
    assert name not in listed


def test_staff_discard_a_draft_from_the_page(sign_in, api):
    name = f"qa-{uuid.uuid4().hex[:6]}"
    body = {"name": name, "instruction": "Published words.", "model": "offline/demo"}
    assert api("admin").post("/api/agents/", json=body).status_code == 201
    admin = sign_in("admin")
    admin.goto("/staff/agents/")
    card = admin.locator(f'.agent-card[data-agent="{name}"]')
    card.get_by_role("button", name="Edit draft").click()
    admin.fill("#agent-instruction", "Draft words nobody wants.")
    admin.get_by_role("button", name="Save draft").click()
    expect(card.locator(".badge", has_text="draft")).to_be_visible()

    admin.once("dialog", lambda dialog: dialog.accept())
    card.get_by_role("button", name="Discard draft").click()

    expect(admin.locator(".toast", has_text="Draft discarded.")).to_be_visible()
    expect(card.locator(".badge", has_text="draft")).to_have_count(0)
    expect(card.get_by_role("button", name="Discard draft")).to_have_count(0)
    expect(card.get_by_role("button", name="Try draft")).to_have_count(0)
    assert api("admin").get(f"/api/agents/{name}/draft/").status_code == 404
    changes = api("admin").get("/api/changes/").json()["results"]
    actions = [c["action"] for c in changes if c["object_repr"] == name]
    assert "draft_discarded" in actions, changes[:3]


def test_code_agent_says_what_may_change(sign_in):
    admin = sign_in("admin")
    admin.goto("/staff/agents/")
    card = admin.locator('.agent-card[data-agent="calculator"]')
    card.get_by_role("button", name="Edit", exact=True).click()
    expect(admin.locator("#code-note")).to_contain_text("who may use it")
    expect(admin.locator("#agent-instruction")).to_have_count(0)
    expect(admin.locator("#agent-tool_choice")).to_be_visible()


def test_non_staff_get_no_builder(sign_in):
    alice = sign_in("alice")
    response = alice.goto("/staff/agents/")
    assert response.status == 403
    expect(alice.locator("#new-agent")).to_have_count(0)
