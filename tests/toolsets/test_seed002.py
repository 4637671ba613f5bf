"""The ToolSet architecture (seed 002) with its own examples: several toolsets
switched in one call, as activateToolSets(names[]), by the model and over the API;
a toolset the agent has only in admin mode (a state key) or for a group."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from agents.models import Event
from tests.toolsets import scripted, seed002
from toolsets import conditions
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

SEED_AGENTS = [
    "tests.toolsets.seed002.multi_agent",
    "tests.toolsets.seed002.careless_agent",
    "tests.toolsets.seed002.mode_agent",
]
SWITCHES = ["activate_toolset", "deactivate_toolset", "list_toolsets"]
BOTH = ["admin_tools", "maintenance_tools"]


@pytest.fixture(autouse=True)
def _seed_agents(toolcrib_settings):
    toolcrib_settings.TOOLCRIB_AGENTS = [
        *toolcrib_settings.TOOLCRIB_AGENTS,
        *SEED_AGENTS,
    ]
    saved = dict(seed002.RECORDS)
    yield
    seed002.RECORDS.clear()
    seed002.RECORDS.update(saved)


def responses(frames: list[dict]) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for frame in frames:
        for response in frame["event"]["function_responses"]:
            found.setdefault(response["name"], []).append(response["response"])
    return found


def listed(client, session: str) -> dict[str, bool]:
    response = client.get(f"/api/sessions/{session}/toolsets/")
    assert response.status_code == 200, response.content
    return {item["name"]: item["active"] for item in response.json()}


def tools_changed(session: str) -> list[dict]:
    rows = Event.objects.filter(session_id=session, kind="tools_changed")
    return [row.data for row in rows.order_by("seq")]


# Several toolsets in one call.


def test_the_model_activates_and_deactivates_several_toolsets_in_one_call(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "multi_agent")

    say(alice, session, "close and purge")

    assert scripted.OFFERED[0] == sorted(["query_records", *SWITCHES])
    assert scripted.OFFERED[1] == sorted(
        ["close_record", "purge_records", "query_records", *SWITCHES]
    )
    assert scripted.OFFERED[4] == sorted(["query_records", *SWITCHES])
    assert seed002.RECORDS == {}  # closed, then purged
    activated, deactivated = (
        responses(events_of(alice, session))[name][0]
        for name in ("activate_toolset", "deactivate_toolset")
    )
    assert activated["changed"] == BOTH
    assert [t["active"] for t in activated["toolsets"]] == [True, True]
    assert deactivated["changed"] == BOTH
    assert [change["toolsets"] for change in tools_changed(session)] == [
        {"admin_tools": True, "maintenance_tools": True},
        {"admin_tools": False, "maintenance_tools": False},
    ]


def test_a_batch_naming_an_unknown_toolset_switches_none(
    catalog, alice, start_session, say, events_of, api_for
):
    session = start_session(alice, "careless_agent")

    say(alice, session, "activate")

    [refused] = responses(events_of(alice, session))["activate_toolset"]
    assert refused["error_message"] == (
        "Unknown toolset no_such_tools. Toolsets of this agent: query_tools, "
        "admin_tools, maintenance_tools."
    )
    assert listed(api_for(alice), session)["admin_tools"] is False
    assert tools_changed(session) == []


def test_the_user_switches_several_toolsets_at_once(
    catalog, alice, start_session, api_for
):
    session = start_session(alice, "multi_agent")
    url = f"/api/sessions/{session}/toolsets/"

    response = api_for(alice).post(
        url,
        {"names": ["maintenance_tools", "admin_tools"], "active": True},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert [(t["name"], t["active"], t["changed_by"]) for t in response.json()] == [
        ("maintenance_tools", True, "alice"),
        ("admin_tools", True, "alice"),
    ]
    assert listed(api_for(alice), session) == {
        "query_tools": True,
        "admin_tools": True,
        "maintenance_tools": True,
    }
    [change] = tools_changed(session)
    assert change["text"] == "alice activated toolsets maintenance_tools, admin_tools."


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"names": ["admin_tools", "nope"], "active": True}, "names"),
        ({"names": [], "active": True}, "names"),
        ({"names": ["admin_tools"]}, "active"),
        ({"names": ["admin_tools"], "active": True, "why": "x"}, "why"),
    ],
)
def test_a_refused_batch_changes_nothing(
    catalog, alice, start_session, api_for, body, field
):
    session = start_session(alice, "multi_agent")

    response = api_for(alice).patch(
        f"/api/sessions/{session}/toolsets/", body, format="json"
    )

    assert response.status_code == 400
    assert list(response.json()) == [field]
    assert listed(api_for(alice), session)["admin_tools"] is False
    assert tools_changed(session) == []


# Conditional toolsets.


def test_a_toolset_held_by_a_state_key_comes_once_the_key_is_set(
    catalog, alice, start_session, say, events_of, api_for, toolcrib_settings
):
    toolcrib_settings.TOOLCRIB_CONDITIONAL_TOOLSETS = {
        "mode_agent": {"restricted_admin_tools": {"state": "admin_mode"}}
    }
    session = start_session(alice, "mode_agent")
    assert "restricted_admin_tools" not in listed(api_for(alice), session)

    say(alice, session, "purge")

    assert "purge_records" not in scripted.OFFERED[0]
    assert "purge_records" in scripted.OFFERED[2]  # after enter_admin_mode
    refused, ran = responses(events_of(alice, session))["purge_records"]
    assert refused["error_message"] == (
        "Tool purge_records is not available: its toolset restricted_admin_tools "
        "is this agent's only while admin_mode is set."
    )
    assert ran == {"status": "success"}
    audit = ToolCall.objects.filter(tool_name="purge_records").order_by("started_at")
    assert [c.status for c in audit] == ["inactive", "ok"]
    assert listed(api_for(alice), session)["restricted_admin_tools"] is True


def test_a_toolset_held_by_a_group_is_its_members_only(
    catalog, alice, bob, make_group, start_session, say, api_for, toolcrib_settings
):
    toolcrib_settings.TOOLCRIB_CONDITIONAL_TOOLSETS = {
        "mode_agent": {"restricted_admin_tools": {"group": "admins"}}
    }
    make_group("admins", alice)
    alices, bobs = start_session(alice, "mode_agent"), start_session(bob, "mode_agent")

    say(alice, alices, "purge")
    for_alice = scripted.OFFERED[0]
    scripted.OFFERED.clear()
    say(bob, bobs, "purge")

    assert "purge_records" in for_alice
    assert all("purge_records" not in offered for offered in scripted.OFFERED)
    assert "restricted_admin_tools" not in listed(api_for(bob), bobs)
    switched = api_for(bob).post(
        f"/api/sessions/{bobs}/toolsets/",
        {"names": ["restricted_admin_tools"], "active": True},
        format="json",
    )
    assert switched.status_code == 400
    assert [
        c.status for c in ToolCall.objects.filter(user=bob, tool_name="purge_records")
    ] == [
        "inactive",
        "inactive",
    ]


def test_a_condition_must_say_a_state_key_or_a_group(settings):
    settings.TOOLCRIB_CONDITIONAL_TOOLSETS = {"a": {"t": {"when": "always"}}}
    with pytest.raises(ImproperlyConfigured):
        conditions.conditions_for("a")
    settings.TOOLCRIB_CONDITIONAL_TOOLSETS = {"a": {"t": {}}}
    with pytest.raises(ImproperlyConfigured):
        conditions.conditions_for("a")
