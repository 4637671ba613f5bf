"""The admin: pages render, and every change goes through the access services."""

import pytest

from tests.toolsets.conftest import tool, toolset
from toolsets import access
from toolsets.models import Grant

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(superuser_client):
    return superuser_client


@pytest.mark.parametrize("model", ["toolset", "tool", "grant", "toolcall"])
def test_changelists_render(catalog, admin_client, model):
    assert admin_client.get(f"/admin/toolsets/{model}/").status_code == 200


def test_tool_change_page_renders(catalog, admin_client):
    pk = tool("rockets.launch_rocket").pk

    assert admin_client.get(f"/admin/toolsets/tool/{pk}/change/").status_code == 200


def test_deny_action_asks_whom_then_denies(catalog, admin_client, alice):
    target = tool("rockets.launch_rocket")
    chosen = {"action": "deny_selected", "_selected_action": [target.pk]}

    page = admin_client.post("/admin/toolsets/tool/", chosen)
    done = admin_client.post(
        "/admin/toolsets/tool/", {**chosen, "apply": "1", "user": alice.pk}
    )

    assert page.status_code == 200 and b"Deny these" in page.content
    assert done.status_code == 302
    grant = Grant.objects.get()
    assert (grant.user, grant.tool, grant.effect) == (alice, target, "deny")
    assert not access.is_allowed(user_id=alice.pk, tool="rockets.launch_rocket")


def test_grant_action_refuses_two_subjects(catalog, admin_client, alice, make_group):
    ops = make_group("ops")
    chosen = {"action": "allow_selected", "_selected_action": [toolset("rockets").pk]}

    page = admin_client.post(
        "/admin/toolsets/toolset/",
        {**chosen, "apply": "1", "user": alice.pk, "group": ops.pk},
    )

    assert page.status_code == 200 and b"exactly one" in page.content
    assert not Grant.objects.exists()


def test_kill_switch_action(catalog, admin_client, alice):
    chosen = {"action": "disable", "_selected_action": [toolset("rockets").pk]}

    admin_client.post("/admin/toolsets/toolset/", chosen)

    assert not toolset("rockets").enabled
    assert (
        access.explain(user_id=alice.pk, tool="rockets.read_gauge").reason == "disabled"
    )


def test_grant_added_and_deleted_in_the_admin(catalog, admin_client, alice):
    added = admin_client.post(
        "/admin/toolsets/grant/add/",
        {"user": alice.pk, "tool": tool("rockets.read_gauge").pk, "effect": "deny"},
    )
    grant = Grant.objects.get()
    assert added.status_code == 302
    assert not access.is_allowed(user_id=alice.pk, tool="rockets.read_gauge")

    admin_client.post(f"/admin/toolsets/grant/{grant.pk}/delete/", {"post": "yes"})

    assert not Grant.objects.exists()
    assert access.is_allowed(user_id=alice.pk, tool="rockets.read_gauge")


def test_admin_refuses_a_grant_without_a_subject(catalog, admin_client):
    page = admin_client.post(
        "/admin/toolsets/grant/add/",
        {"tool": tool("rockets.read_gauge").pk, "effect": "deny"},
    )

    assert page.status_code == 200  # the form again, with the constraint's error
    assert not Grant.objects.exists()
