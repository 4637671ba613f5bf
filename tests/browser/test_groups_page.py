"""The Groups page (staff): create and rename a group, add and remove a member, see a
user's groups and a group's members, delete the group; alice's tools follow."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def toolset_allowed(client, name: str) -> bool:
    [row] = [
        r for r in client.get("/api/access/").json()["toolsets"] if r["name"] == name
    ]
    return row["allowed"]


def test_staff_manage_a_group_and_its_members_in_the_browser(sign_in, api, shoot):
    staff, alice = api("admin"), api("alice")
    admin = sign_in("admin")
    admin.goto("/staff/groups/")
    expect(admin.get_by_role("link", name="Groups")).to_have_attribute(
        "aria-current", "page"
    )

    admin.fill("#new-group-name", "qa-team")
    admin.get_by_role("button", name="Create").click()
    expect(admin.locator("#group-title")).to_contain_text("qa-team")
    expect(admin.locator("#group-list")).to_contain_text("qa-team")
    granted = staff.post(
        "/api/grants/", json={"toolset": "sql", "group": "qa-team", "effect": "allow"}
    )
    assert granted.status_code == 201, granted.text
    assert not toolset_allowed(alice, "sql")

    admin.fill("#member-username", "alice")
    admin.get_by_role("button", name="Add member").click()
    expect(admin.locator('#members li[data-member="alice"]')).to_be_visible()
    expect(admin.locator('#group-list [data-group="qa-team"] .count')).to_have_text("1")
    assert toolset_allowed(alice, "sql")

    admin.fill("#user-search", "ali")
    expect(admin.locator('#user-list li[data-user="bob"]')).to_have_count(0)
    person = admin.locator('#user-list li[data-user="alice"]')
    expect(person.locator(".user-groups")).to_contain_text("qa-team")
    shoot(admin, "groups")

    admin.fill("#group-name", "qa")
    admin.get_by_role("button", name="Rename").click()
    expect(admin.locator("#group-title")).to_have_text("qa")
    expect(person.locator(".user-groups")).to_contain_text("qa")
    assert toolset_allowed(alice, "sql")  # the grant follows the group

    admin.get_by_role("button", name="Remove alice from qa").click()
    expect(admin.locator("#members")).to_contain_text("No members yet.")
    assert not toolset_allowed(alice, "sql")

    admin.once("dialog", lambda dialog: dialog.accept())
    admin.get_by_role("button", name="Delete group").click()
    expect(admin.locator('#group-list [data-group="qa"]')).to_have_count(0)
    assert not [g for g in staff.get("/api/groups/").json() if g["name"] == "qa"]


def test_a_taken_name_is_refused_readably(sign_in):
    admin = sign_in("admin")
    admin.goto("/staff/groups/")

    admin.fill("#new-group-name", "Managers")
    admin.get_by_role("button", name="Create").click()

    expect(admin.locator("#toasts")).to_contain_text("exists already")


def test_a_user_gets_no_groups_page(sign_in):
    alice = sign_in("alice")

    alice.goto("/staff/groups/")

    expect(alice.get_by_role("link", name="Groups")).to_have_count(0)
    expect(alice.locator("main")).to_contain_text("staff")
