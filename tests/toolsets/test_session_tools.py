"""A session's tools, and why each one its user cannot use is unavailable, in words."""

import pytest

from tests.toolsets.conftest import tool
from toolsets import grants

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def tools_of(api_for):
    def read(user, session: str) -> dict[str, dict]:
        response = api_for(user).get(f"/api/sessions/{session}/tools/")
        assert response.status_code == 200, response.content
        return {row["full_name"]: row for row in response.json()["tools"]}

    return read


def test_each_unavailable_tool_says_why_in_plain_words(
    guarded_catalog,
    alice,
    make_group,
    start_session,
    tools_of,
):
    support = make_group("support", alice)
    grants.grant_tool(target=tool("guard.wire_money"), effect="deny", group=support)
    grants.grant_tool(target=tool("guard.query_table"), effect="deny", user=alice)
    grants.update_tool(tool=tool("guard.read_file"), enabled=False)
    session = start_session(alice, "guard")

    shown = tools_of(alice, session)

    assert shown["guard.wire_money"] == {
        "full_name": "guard.wire_money",
        "name": "wire_money",
        "toolset": "guard",
        "available": False,
        "reason": "deny",
        "why": "denied for your group support by an admin",
        "condition_text": "",
        "description": "Wire money to an account.",
    }
    assert shown["guard.query_table"]["why"] == "denied to you by an admin"
    assert shown["guard.read_file"]["why"] == "disabled by an admin"
    assert shown["guard.fetch"]["available"] is True
    assert shown["guard.fetch"]["why"] is None


def test_a_toolset_switched_off_and_on_shows_at_the_next_read(
    guarded_catalog,
    alice,
    start_session,
    tools_of,
    api_for,
):
    session = start_session(alice, "guard")

    api_for(alice).patch(
        f"/api/sessions/{session}/toolsets/guard/", {"active": False}, format="json"
    )
    off = tools_of(alice, session)
    api_for(alice).patch(
        f"/api/sessions/{session}/toolsets/guard/", {"active": True}, format="json"
    )
    on = tools_of(alice, session)

    assert off["guard.fetch"]["reason"] == "inactive"
    assert off["guard.fetch"]["why"] == "toolset guard switched off in this session"
    assert on["guard.fetch"]["available"] is True


def test_an_available_tool_shows_the_condition_it_is_allowed_on(
    guarded_catalog,
    alice,
    start_session,
    tools_of,
    api_for,
    staff,
):
    api_for(staff).post(
        "/api/grants/",
        {
            "user": "alice",
            "tool": "guard.read_file",
            "effect": "allow",
            "condition": {"path": {"prefix": "reports/"}},
        },
        format="json",
    )
    session = start_session(alice, "guard")

    shown = tools_of(alice, session)

    assert shown["guard.read_file"]["available"] is True
    assert shown["guard.read_file"]["condition_text"] == (
        "path must start with 'reports/'"
    )


def test_another_users_session_tools_are_not_found(
    guarded_catalog,
    alice,
    bob,
    start_session,
    api_for,
):
    session = start_session(alice, "guard")

    response = api_for(bob).get(f"/api/sessions/{session}/tools/")

    assert response.status_code == 404
