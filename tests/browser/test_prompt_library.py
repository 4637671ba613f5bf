"""The prompt library in the browser: alice writes a prompt with variables on the
Prompts page and shares it with a group; in a session `/` finds it, Enter asks for
its variables, and the filled text lands in the box unsent; bob, in the group, finds
it too; a bad command is refused beside the form; the page fits a phone."""

import uuid

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


def _open_session(page, api, username: str) -> None:
    made = api(username).post("/api/sessions/", json={"agent": "calculator"})
    assert made.status_code == 201, made.text
    page.goto(f"/sessions/{made.json()['id']}/")
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")


def _group_with(api, name: str, *usernames: str) -> None:
    admin = api("admin")
    made = admin.post("/api/groups/", json={"name": name})
    assert made.status_code == 201, made.text
    for username in usernames:
        added = admin.post(
            f"/api/groups/{made.json()['id']}/members/", json={"username": username}
        )
        assert added.status_code in (200, 201), added.text


def test_write_share_and_use_a_prompt_with_variables(sign_in, api, shoot):
    tag = uuid.uuid4().hex[:6]
    group = f"reviewers-{tag}"
    _group_with(api, group, "alice", "bob")
    command = f"review-{tag}"

    alice = sign_in("alice")
    alice.goto("/prompts/")
    alice.fill("input[name=command]", "Two Words")
    alice.fill("input[name=title]", "Review")
    alice.fill("textarea[name=body]", "Review {{file}} for {{audience}}.")
    alice.get_by_role("button", name="Save prompt").click()
    expect(alice.locator("#prompt-errors")).to_contain_text("command:")
    alice.fill("input[name=command]", command)
    alice.get_by_label(group).check()
    alice.get_by_role("button", name="Save prompt").click()
    item = alice.locator(f'.prompt-item[data-command="{command}"]')
    expect(item).to_contain_text(f"shared with {group}")
    expect(item).to_contain_text("Asks for: file, audience")
    shoot(alice, "prompts-page")

    _open_session(alice, api, "alice")
    box = alice.locator("#message")
    box.fill("")
    box.press_sequentially(f"/review-{tag[:3]}")
    option = alice.locator("#prompt-picker [role=option]", has_text=f"/{command}")
    expect(option).to_be_visible()
    expect(option).to_have_attribute("aria-selected", "true")
    box.press("Enter")
    # Enter picked the prompt: nothing was sent; its variables are asked for.
    form = alice.locator(".prompt-vars")
    expect(form.locator("input[name=file]")).to_be_focused()
    form.locator("input[name=file]").fill("README.md")
    form.locator("input[name=file]").press("Tab")
    alice.keyboard.type("new users")
    alice.keyboard.press("Enter")
    expect(box).to_have_value("Review README.md for new users.")
    expect(box).to_be_focused()
    expect(alice.locator("#timeline li.kind-user_message")).to_have_count(0)
    shoot(alice, "prompt-inserted")

    # Escape closes the list and leaves the text as typed.
    box.fill("")
    box.press_sequentially("/")
    expect(alice.locator("#prompt-picker")).to_be_visible()
    box.press("Escape")
    expect(alice.locator("#prompt-picker")).to_be_hidden()
    expect(box).to_have_value("/")

    # bob is in the group: he finds it by its title too; he may not change it.
    bob = sign_in("bob")
    _open_session(bob, api, "bob")
    bob.locator("#message").press_sequentially("/")
    expect(
        bob.locator("#prompt-picker [role=option]", has_text=f"/{command}")
    ).to_contain_text("by alice")
    bob.goto("/prompts/")
    shared = bob.locator(f'.prompt-item[data-command="{command}"]')
    expect(shared).to_contain_text("by alice")
    expect(shared.get_by_role("button", name="Edit")).to_have_count(0)


def test_a_prompt_not_shared_is_not_offered_to_others(sign_in, api):
    tag = uuid.uuid4().hex[:6]
    made = api("alice").post(
        "/api/prompts/",
        json={"command": f"private-{tag}", "title": "Mine", "body": "Only mine."},
    )
    assert made.status_code == 201, made.text
    bob = sign_in("bob")
    _open_session(bob, api, "bob")
    bob.locator("#message").press_sequentially(f"/private-{tag}")
    expect(bob.locator("#prompt-picker")).to_contain_text("No prompt")
    expect(bob.locator("#prompt-picker [role=option]")).to_have_count(0)


def test_the_prompts_page_fits_a_phone(sign_in, api):
    tag = uuid.uuid4().hex[:6]
    api("alice").post(
        "/api/prompts/",
        json={
            "command": f"long-{tag}-" + "x" * 40,
            "title": "A title that goes on " * 5,
            "body": "Averylongwordwithoutanyspacesatall" * 6,
        },
    )
    alice = sign_in("alice", viewport=PHONE)
    alice.goto("/prompts/")
    expect(alice.locator(".prompt-item").first).to_be_visible()
    wide = alice.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert wide <= 0
