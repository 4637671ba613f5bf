"""Toolset activation per session: the model's switches, the API's, and grants."""

import pytest
from asgiref.sync import async_to_sync
from google.adk.sessions import Session as AdkSession

from agents.events.wire import EventFrame
from agents.models import Session
from demo import inventory
from tests.toolsets import scripted
from tests.toolsets.conftest import toolset
from toolsets import access, activation, grants
from toolsets.models import SessionToolset, Tool, ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

ACTIVATION_AGENTS = [
    "tests.toolsets.activated.switcher",
    "tests.toolsets.activated.retirer",
    "tests.toolsets.activated.eager",
    "tests.toolsets.activated.fumbler",
    "tests.toolsets.activated.restocker",
]
SWITCHES = ["activate_toolset", "deactivate_toolset", "list_toolsets"]
QUERY = ["count_items", "find_item"]
ADMIN = ["remove_item", "restock_item"]


@pytest.fixture(autouse=True)
def _agents(toolcrib_settings):
    toolcrib_settings.TOOLCRIB_AGENTS = [
        *toolcrib_settings.TOOLCRIB_AGENTS,
        *ACTIVATION_AGENTS,
    ]
    saved = dict(inventory.STOCK)
    yield
    inventory.STOCK.clear()
    inventory.STOCK.update(saved)


def responses(frames: list[dict]) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for frame in frames:
        for response in frame["event"]["function_responses"]:
            found.setdefault(response["name"], []).append(response["response"])
    return found


def toggle(client, session: str, name: str, body) -> object:
    return client.patch(
        f"/api/sessions/{session}/toolsets/{name}/", body, format="json"
    )


def listed(client, session: str) -> dict[str, bool]:
    response = client.get(f"/api/sessions/{session}/toolsets/")
    assert response.status_code == 200, response.content
    return {item["name"]: item["active"] for item in response.json()}


# Defaults and listing.


def test_a_session_starts_with_each_toolsets_default(
    catalog, alice, api_for, start_session
):
    session = start_session(alice, "switcher")

    assert toolset("inventory_admin").active_by_default is False
    assert listed(api_for(alice), session) == {
        "inventory_query": True,
        "inventory_admin": False,
    }


def test_an_inactive_toolsets_tools_are_not_offered(catalog, alice, start_session, say):
    say(alice, start_session(alice, "switcher"), "hi")

    assert scripted.OFFERED[0] == sorted([*QUERY, *SWITCHES])


def test_the_switches_are_not_in_the_catalog_so_no_grant_can_hide_them(catalog):
    assert not Tool.objects.filter(name__in=SWITCHES).exists()


def test_list_toolsets_gives_name_description_source_active_and_tools(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "switcher")

    say(alice, session, "hi")

    (listing,) = responses(events_of(alice, session))["list_toolsets"]
    assert listing["toolsets"] == [
        {
            "name": "inventory_query",
            "description": "Tools for querying the inventory: look up an item, "
            "count the stock.",
            "source": "local",
            "active": True,
            "tools": ["find_item", "count_items"],
        },
        {
            "name": "inventory_admin",
            "description": "Administrative tools for the inventory: restock and "
            "remove items.",
            "source": "local",
            "active": False,
            "tools": ["restock_item", "remove_item"],
        },
    ]


def test_each_model_step_asks_with_one_query(
    catalog, alice, start_session, django_assert_num_queries
):
    row = Session.objects.get(pk=start_session(alice, "restocker"))
    session = AdkSession(id=row.adk_id, app_name=row.app_name, user_id=row.user_id)
    names = ["inventory_query", "inventory_admin"]

    with django_assert_num_queries(1):
        inactive = async_to_sync(activation.ainactive_toolsets)(
            session=session, names=names
        )

    assert inactive == {"inventory_admin"}


def test_a_model_step_reads_a_sessions_choices_again_only_once_they_changed(
    catalog, alice, start_session, django_assert_num_queries
):
    row = Session.objects.get(pk=start_session(alice, "restocker"))
    session = AdkSession(id=row.adk_id, app_name=row.app_name, user_id=row.user_id)
    names = ["inventory_query", "inventory_admin"]
    key = activation.version_key(row)

    def inactive_at_a_step() -> set[str]:
        snapshot = async_to_sync(access.asnapshot)(keys=[key])
        return async_to_sync(activation.ainactive_toolsets)(
            session=session, names=names, snapshot=snapshot
        )

    async_to_sync(access.asnapshot)()  # the catalog, read once for everyone

    # Each step reads access's versions (1); the choices only when they changed.
    with django_assert_num_queries(2):
        first = inactive_at_a_step()
    with django_assert_num_queries(1):
        again = inactive_at_a_step()
    activation.set_toolsets_active(
        session=row, names=["inventory_admin"], active=True, changed_by=alice
    )
    with django_assert_num_queries(2):
        changed = inactive_at_a_step()

    assert first == again == {"inventory_admin"}
    assert changed == set()


# The model switches.


def test_the_model_activates_a_toolset_and_uses_it_in_the_same_turn(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "switcher")

    say(alice, session, "restock bolts")

    listing, before_activation, after_activation = scripted.OFFERED[:3]
    assert "restock_item" not in before_activation
    assert sorted(after_activation) == sorted([*QUERY, *ADMIN, *SWITCHES])
    assert inventory.STOCK["bolts"] == 125
    found = responses(events_of(alice, session))
    assert found["activate_toolset"][0]["changed"] is True
    assert found["restock_item"][0]["status"] == "success"


def test_an_activation_lasts_for_the_session_and_is_recorded(
    catalog, alice, api_for, start_session, say
):
    session = start_session(alice, "switcher")

    say(alice, session, "restock bolts")
    scripted.OFFERED.clear()
    say(alice, session, "again")

    assert "restock_item" in scripted.OFFERED[0]  # the next turn starts active
    choice = SessionToolset.objects.get(session_id=session)
    assert (choice.toolset.name, choice.active, choice.changed_by) == (
        "inventory_admin",
        True,
        None,
    )
    assert listed(api_for(alice), session)["inventory_admin"] is True


def test_a_deactivated_toolsets_tool_is_refused_if_called_anyway(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "retirer")

    say(alice, session, "find bolts")

    assert "find_item" in scripted.OFFERED[0]
    assert "find_item" not in scripted.OFFERED[1]
    assert set(SWITCHES) <= set(scripted.OFFERED[1])  # never in a toolset
    (refused,) = responses(events_of(alice, session))["find_item"]
    assert refused["status"] == "error"
    assert "inventory_query is not active" in refused["error_message"]
    audit = ToolCall.objects.get(tool_name="find_item")
    assert (audit.status, audit.attempts) == (ToolCall.Status.INACTIVE, 0)
    assert "not active" in audit.result_summary


def test_a_call_in_the_activating_batch_is_refused_and_the_next_step_runs(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "eager")

    say(alice, session, "restock")

    first, second = responses(events_of(alice, session))["restock_item"]
    assert first["status"] == "error"
    assert second["status"] == "success"
    assert inventory.STOCK["bolts"] == 127  # only the second restock ran


def test_unknown_already_active_and_deactivating(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "fumbler")

    say(alice, session, "go")

    found = responses(events_of(alice, session))
    unknown, already = found["activate_toolset"]
    assert unknown == {
        "status": "error",
        "error_message": "Unknown toolset no_such_toolset. Toolsets of this "
        "agent: inventory_query, inventory_admin.",
    }
    assert (already["status"], already["changed"]) == ("success", False)
    assert already["message"] == "Toolset inventory_query is already active."
    inactive = found["deactivate_toolset"][0]
    assert (inactive["changed"], inactive["toolset"]["active"]) == (False, False)
    assert not SessionToolset.objects.exists()  # nothing changed, nothing stored


def test_a_change_is_a_tools_changed_event_in_the_stream(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "switcher")

    say(alice, session, "restock bolts")

    frames = events_of(alice, session)
    (changed,) = [f for f in frames if f["event"]["kind"] == "tools_changed"]
    EventFrame.model_validate(changed)
    assert changed["event"]["toolsets"] == {"inventory_admin": True}
    assert changed["event"]["text"] == (
        "switcher_agent activated toolset inventory_admin."
    )


# The user switches over the API.


def test_an_api_toggle_shows_from_the_next_model_step(
    catalog, alice, api_for, start_session, say, events_of
):
    session = start_session(alice, "restocker")
    say(alice, session, "restock")
    assert scripted.OFFERED[0] == QUERY  # inactive: not offered
    assert inventory.STOCK["bolts"] == 120
    scripted.OFFERED.clear()

    response = toggle(api_for(alice), session, "inventory_admin", {"active": True})
    say(alice, session, "restock")

    assert response.status_code == 200, response.content
    assert response.json()["active"] is True
    assert response.json()["changed_by"] == "alice"
    assert scripted.OFFERED[0] == sorted([*QUERY, *ADMIN])
    assert inventory.STOCK["bolts"] == 125
    kinds = [f["event"]["kind"] for f in events_of(alice, session)]
    assert "tools_changed" in kinds


def test_an_api_toggle_off_refuses_the_tool(
    catalog, alice, api_for, start_session, say, events_of
):
    session = start_session(alice, "retirer")

    toggle(api_for(alice), session, "inventory_query", {"active": False})
    say(alice, session, "find bolts")

    assert "find_item" not in scripted.OFFERED[0]
    assert responses(events_of(alice, session))["find_item"][0]["status"] == "error"


def test_activation_is_per_session(catalog, alice, api_for, start_session, say):
    client = api_for(alice)
    first = start_session(alice, "restocker")
    second = start_session(alice, "restocker")

    toggle(client, first, "inventory_admin", {"active": True})
    say(alice, second, "restock")

    assert listed(client, first)["inventory_admin"] is True
    assert listed(client, second)["inventory_admin"] is False
    assert "restock_item" not in scripted.OFFERED[0]
    assert inventory.STOCK["bolts"] == 120


@pytest.mark.parametrize(
    "body",
    [{}, {"active": "yes"}, {"active": None}, {"active": True, "extra": 1}, [True]],
)
def test_a_bad_body_is_a_400(catalog, alice, api_for, start_session, body):
    session = start_session(alice, "restocker")

    response = toggle(api_for(alice), session, "inventory_admin", body)

    assert response.status_code == 400
    assert not SessionToolset.objects.exists()


def test_an_unknown_toolset_is_a_400(catalog, alice, api_for, start_session):
    session = start_session(alice, "restocker")

    response = toggle(api_for(alice), session, "no_such_toolset", {"active": True})

    assert response.status_code == 400
    assert "Unknown toolset no_such_toolset" in response.json()["name"][0]


def test_post_toggles_too(catalog, alice, api_for, start_session):
    session = start_session(alice, "restocker")

    response = api_for(alice).post(
        f"/api/sessions/{session}/toolsets/inventory_admin/",
        {"active": True},
        format="json",
    )

    assert response.status_code == 200
    assert listed(api_for(alice), session)["inventory_admin"] is True


def test_another_users_session_is_a_404(catalog, alice, bob, api_for, start_session):
    session = start_session(alice, "restocker")
    client = api_for(bob)

    listing = client.get(f"/api/sessions/{session}/toolsets/")
    switched = toggle(client, session, "inventory_admin", {"active": True})

    assert (listing.status_code, switched.status_code) == (404, 404)
    assert not SessionToolset.objects.exists()


# Grants: activation never widens access.


@pytest.fixture
def admin_granted_only(catalog):
    grants.update_toolset(
        toolset=toolset("inventory_admin"), default_policy="granted_only"
    )


def test_a_toolset_without_a_grant_is_not_listed_nor_activatable(
    admin_granted_only, alice, api_for, start_session, say, events_of
):
    session = start_session(alice, "switcher")
    client = api_for(alice)

    say(alice, session, "restock bolts")
    response = toggle(client, session, "inventory_admin", {"active": True})

    found = responses(events_of(alice, session))
    assert [t["name"] for t in found["list_toolsets"][0]["toolsets"]] == [
        "inventory_query"
    ]
    assert found["activate_toolset"][0]["error_message"].startswith(
        "Unknown toolset inventory_admin."
    )
    assert response.status_code == 400
    assert listed(client, session) == {"inventory_query": True}
    assert inventory.STOCK["bolts"] == 120
    assert not SessionToolset.objects.exists()


def test_an_active_toolset_without_a_grant_is_never_offered_nor_run(
    admin_granted_only, alice, start_session, say, events_of
):
    session = start_session(alice, "restocker")
    SessionToolset.objects.create(
        session_id=session,
        toolset=toolset("inventory_admin"),
        active=True,
        changed_at="2026-01-01T00:00:00Z",
    )

    say(alice, session, "restock")

    assert scripted.OFFERED[0] == QUERY
    assert inventory.STOCK["bolts"] == 120
    audit = ToolCall.objects.get(tool_name="restock_item")
    assert audit.status == ToolCall.Status.DENIED


def test_a_grant_makes_the_toolset_listable_and_activatable(
    admin_granted_only, alice, api_for, start_session
):
    session = start_session(alice, "restocker")
    grants.grant_tool(target=toolset("inventory_admin"), effect="allow", user=alice)

    response = toggle(api_for(alice), session, "inventory_admin", {"active": True})

    assert response.status_code == 200
    assert response.json()["tools"] == ["restock_item", "remove_item"]


# The demo.


def test_the_inventory_demo_reproduces_the_seed(
    catalog, alice, api_for, start_session, say, events_of
):
    session = start_session(alice, "inventory")

    say(alice, session, "list toolsets")
    say(alice, session, "activate toolset name=inventory_admin")
    say(alice, session, 'restock item="bolts" quantity=5')
    say(alice, session, "deactivate toolset name=inventory_admin")

    found = responses(events_of(alice, session))
    listing = found["list_toolsets"][0]["toolsets"]
    assert [(t["name"], t["active"]) for t in listing] == [
        ("inventory_query", True),
        ("inventory_admin", False),
    ]
    assert found["activate_toolset"][0]["changed"] is True
    assert found["restock_item"][0]["in_stock"] == 125
    assert found["deactivate_toolset"][0]["changed"] is True
    assert listed(api_for(alice), session)["inventory_admin"] is False


def test_staff_set_the_default_for_new_sessions(
    catalog, alice, staff, api_for, start_session
):
    before = start_session(alice, "restocker")

    response = api_for(staff).patch(
        "/api/toolsets/inventory_admin/", {"active_by_default": True}, format="json"
    )
    after = start_session(alice, "restocker")

    assert response.status_code == 200, response.content
    assert listed(api_for(alice), after)["inventory_admin"] is True
    assert listed(api_for(alice), before)["inventory_admin"] is True  # no choice yet


def test_a_sessions_choice_outlives_a_new_default(
    catalog, alice, staff, api_for, start_session
):
    session = start_session(alice, "restocker")
    toggle(api_for(alice), session, "inventory_query", {"active": False})

    api_for(staff).patch(
        "/api/toolsets/inventory_query/", {"active_by_default": True}, format="json"
    )

    assert listed(api_for(alice), session)["inventory_query"] is False


def test_the_schema_documents_the_session_toolsets_api(catalog, alice, api_for):
    paths = api_for(alice).get("/api/schema/?format=json").json()["paths"]

    assert "get" in paths["/api/sessions/{id}/toolsets/"]
    assert {"patch", "post"} <= set(paths["/api/sessions/{id}/toolsets/{name}/"])
