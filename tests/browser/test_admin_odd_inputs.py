"""A team's admin types what admins type: each refusal shows next to its field on
the page, in words (the API's 400 with field errors, as people read it)."""

import uuid

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def fresh(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:6]}"


def test_renaming_a_connection_agents_use_is_refused_by_the_name(sign_in, api):
    name, agent = fresh("lab"), fresh("qa-")
    staff = api("admin")
    body = {"name": name, "kind": "ollama", "base_url": "http://127.0.0.1:9"}
    assert staff.post("/api/providers/", json=body).status_code == 201
    made = {"name": agent, "instruction": "x", "model": f"{name}/llama3"}
    assert staff.post("/api/agents/", json=made).status_code == 201
    admin = sign_in("admin")
    admin.goto("/staff/models/")
    admin.locator(f'button[data-connection="{name}"]').click()
    admin.locator("#edit-connection").click()

    admin.fill("#connection-name", f"{name}x")
    admin.get_by_role("button", name="Save").click()

    expect(admin.locator("#connection-name-error")).to_contain_text(
        f"Agents name this connection's models by its name ({agent})"
    )
    assert staff.get(f"/api/providers/{name}/").status_code == 200


def test_an_agent_on_a_connection_nobody_made_is_refused_by_the_model(sign_in):
    admin = sign_in("admin")
    admin.goto("/staff/agents/")
    admin.get_by_role("button", name="New agent").click()
    admin.fill("#agent-name", fresh("qa-"))
    admin.fill("#agent-instruction", "Answer briefly.")
    admin.fill("#agent-model", "ghost/llama3")
    admin.get_by_role("button", name="Save and publish").click()

    expect(admin.locator("#agent-model-error")).to_have_text(
        "No model connection is named ghost. Staff add connections on the Models page."
    )


def test_inviting_an_email_that_has_an_account_is_refused_by_the_email(sign_in, api):
    email = f"{fresh('bob')}@example.com"
    user = {
        "username": fresh("bob"),
        "password": "correct-horse-battery",
        "email": email,
    }
    assert api("admin").post("/api/users/", json=user).status_code == 201
    admin = sign_in("admin")
    admin.goto("/staff/people/")
    admin.get_by_role("button", name="Invite").click()

    admin.fill('#invite-form input[name="email"]', email.upper())
    admin.get_by_role("button", name="Make the link").click()

    expect(admin.locator('#invite-form [data-error="email"]')).to_have_text(
        f"{user['username']} has this email already."
    )
    expect(admin.locator("#invite-link")).to_have_count(0)


def test_a_tool_server_url_without_its_scheme_is_refused_by_the_url(sign_in):
    admin = sign_in("admin")
    admin.goto("/staff/tool-servers/")
    admin.get_by_role("button", name="Connect a server").click()
    admin.select_option("#connect-kind", "mcp-http")
    admin.fill("#connect-name", fresh("srv"))
    admin.fill("#connect-url", "localhost:8000/mcp")

    admin.get_by_role("button", name="Connect", exact=True).click()

    expect(admin.locator("#error-url")).to_have_text(
        "A URL starting with http:// or https:// (e.g. http://localhost:8000/mcp)."
    )


def test_an_agent_whose_connection_was_removed_says_so_on_its_card(sign_in, api):
    name, agent = fresh("lab"), fresh("qa-")
    staff = api("admin")
    body = {"name": name, "kind": "ollama", "base_url": "http://127.0.0.1:9"}
    assert staff.post("/api/providers/", json=body).status_code == 201
    made = {"name": agent, "instruction": "x", "model": f"{name}/llama3"}
    assert staff.post("/api/agents/", json=made).status_code == 201
    assert staff.delete(f"/api/providers/{name}/").status_code == 204
    admin = sign_in("admin")

    admin.goto("/staff/agents/")

    expect(admin.locator(f'.agent-card[data-agent="{agent}"]')).to_contain_text(
        f"No model connection is named {name}. Staff add connections on the "
        "Models page."
    )
