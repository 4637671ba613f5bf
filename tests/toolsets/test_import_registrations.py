"""Imports an admin registers at run time, over the API: catalogued, governed, called.

The MCP server is the `mcp` package's own, started over stdio by the registration
(tests/toolsets/builtin/mcp_server.py); the OpenAPI spec and its API are served by
a loopback HTTP server. Turns are real: the offline model picks the imported tool
from the user's words, ADK runs it under the governance plugin.
"""

import json
import logging
import sys
from pathlib import Path

import pytest

from agents.models import AgentSpec
from tests.toolsets.builtin import servers
from tests.toolsets.builtin.servers import Reply, json_reply
from tests.toolsets.test_imports import pet_spec
from toolsets import access, grants
from toolsets.catalog import sync_catalog
from toolsets.models import Grant, Tool, ToolCall, ToolImport, Toolset

pytestmark = pytest.mark.django_db(transaction=True)

MCP_SERVER = Path(__file__).parent / "builtin" / "mcp_server.py"
SECRET = "s3cret-t0ken"


@pytest.fixture
def tools_file(tmp_path):
    path = tmp_path / "tools.txt"
    path.write_text("add echo")
    return path


@pytest.fixture
def stdio_command(tools_file):
    return [sys.executable, str(MCP_SERVER), "stdio", str(tools_file)]


@pytest.fixture
def petstore():
    """The pet spec at /openapi.json, its API under /api."""
    server = servers.serve()
    server.routes["/openapi.json"] = json_reply(pet_spec())
    server.routes["/api/pets"] = lambda h: json_reply(
        {"pets": ["rex", "tom"], "query": h.path.partition("?")[2]}
    )
    yield server
    servers.stop(server)


@pytest.fixture
def admin(api_for, staff):
    return api_for(staff)


def register(client, **fields) -> dict:
    """Register an import, its tools approved as read (tests/toolsets/imports/
    test_tool_reviews.py covers the review)."""
    fields.setdefault("approve_tools", True)
    response = client.post("/api/imports/", fields, format="json")
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def calc(admin, stdio_command) -> dict:
    """The MCP server, registered with a secret in its environment."""
    return register(
        admin, kind="mcp", name="calc", command=stdio_command, env={"TOKEN": SECRET}
    )


@pytest.fixture
def pets(admin, petstore) -> dict:
    return register(
        admin,
        kind="openapi",
        name="pets",
        url=petstore.url("/openapi.json"),
        allow_private_network=True,
    )


def agent_using(toolset: str, instruction: str) -> str:
    """A row agent (as an admin would create it) on the offline model."""
    AgentSpec.objects.create(
        name=f"{toolset}-agent",
        model="offline/demo",
        instruction=instruction,
        toolsets=[toolset],
    )
    return f"{toolset}-agent"


def granted_only(name: str, *users) -> Toolset:
    toolset = Toolset.objects.get(name=name)
    grants.update_toolset(toolset=toolset, default_policy="granted_only")
    for user in users:
        grants.grant_tool(target=toolset, effect="allow", user=user)
    return toolset


def responses_of(frames: list[dict]) -> dict[str, dict]:
    return {
        r["name"]: r["response"]
        for f in frames
        for r in f["event"].get("function_responses") or []
    }


def tools_of(name: str) -> dict[str, bool]:
    return dict(
        Tool.objects.filter(toolset__name=name).values_list("full_name", "missing")
    )


# Registering: the tools appear in the catalog, with their source.


def test_a_registered_mcp_server_and_openapi_spec_appear_in_the_catalog(calc, pets):
    assert [(t["full_name"], t["missing"]) for t in calc["tools"]] == [
        ("calc.calc_add", False),
        ("calc.calc_echo", False),
    ]
    assert [(t["full_name"], t["missing"]) for t in pets["tools"]] == [
        ("pets.pets_list_pets", False)
    ]
    assert calc["tools"][0]["description"] == "Add two integers."
    sources = dict(Toolset.objects.values_list("name", "source"))
    assert sources == {"calc": "mcp", "pets": "openapi"}
    add = Tool.objects.get(full_name="calc.calc_add")
    assert add.parameters["properties"].keys() == {"a", "b"}
    assert calc["last_error"] == ""
    assert calc["last_refreshed_at"] is not None


# Governance: a turn of the offline model calls the real tool, audited.


def test_a_granted_user_calls_the_real_mcp_tool_and_the_call_is_audited(
    calc, alice, start_session, say, events_of
):
    granted_only("calc", alice)
    agent = agent_using("calc", "To add two numbers, use calc_add.")
    session = start_session(alice, agent)
    say(alice, session, "add a=2 b=3")

    response = responses_of(events_of(alice, session))["calc_add"]
    assert response["content"][0]["text"] == "5"
    call = ToolCall.objects.get()
    assert (call.tool_full_name, call.status, call.user) == (
        "calc.calc_add",
        "ok",
        alice,
    )


def test_a_granted_user_calls_the_real_api_operation(
    pets, alice, start_session, say, events_of
):
    granted_only("pets", alice)
    agent = agent_using("pets", "To list the pets, use pets_list_pets.")
    session = start_session(alice, agent)
    say(alice, session, "list the pets limit=2")

    response = responses_of(events_of(alice, session))["pets_list_pets"]
    assert response == {"pets": ["rex", "tom"], "query": "limit=2"}
    call = ToolCall.objects.get()
    assert (call.tool_full_name, call.status) == ("pets.pets_list_pets", "ok")


def test_a_user_without_a_grant_is_never_offered_imported_tools(
    calc, alice, bob, api_for, start_session, say, events_of
):
    granted_only("calc", alice)
    agent = agent_using("calc", "To add two numbers, use calc_add.")
    offered = api_for(bob).get(f"/api/agents/{agent}/tools/").json()
    session = start_session(bob, agent)
    say(bob, session, "add a=2 b=3")

    assert offered == []
    assert responses_of(events_of(bob, session)) == {}
    assert not ToolCall.objects.exists()
    granted = api_for(alice).get(f"/api/agents/{agent}/tools/").json()
    assert [t["full_name"] for t in granted] == ["calc.calc_add", "calc.calc_echo"]


def test_a_disabled_imported_toolset_is_refused_like_any_other(
    pets, alice, api_for, start_session, say, events_of
):
    grants.update_toolset(toolset=Toolset.objects.get(name="pets"), enabled=False)
    agent = agent_using("pets", "To list the pets, use pets_list_pets.")
    session = start_session(alice, agent)
    say(alice, session, "list the pets limit=2")

    assert api_for(alice).get(f"/api/agents/{agent}/tools/").json() == []
    assert responses_of(events_of(alice, session)) == {}


# Refreshing.


def test_refreshing_an_mcp_import_adds_new_tools_and_marks_vanished_ones(
    calc, admin, tools_file
):
    tools_file.write_text("add shout")
    response = admin.post(f"/api/imports/{calc['id']}/refresh/")

    assert response.status_code == 200, response.content
    assert tools_of("calc") == {
        "calc.calc_add": False,
        "calc.calc_echo": True,
        "calc.calc_shout": False,
    }
    shout = Tool.objects.get(full_name="calc.calc_shout")
    assert shout.description == "Echo the text back in capitals."


def test_refreshing_an_openapi_import_reads_the_spec_again(
    pets, admin, petstore, alice, start_session, say, events_of
):
    granted_only("pets", alice)
    agent = agent_using("pets", "To add a pet, use pets_create_pet.")
    spec = pet_spec(with_create=True)
    del spec["paths"]["/pets"]["get"]
    petstore.routes["/openapi.json"] = json_reply(spec)
    petstore.routes["/api/pets"] = lambda h: json_reply({"added": json.loads(h.body)})
    response = admin.post(f"/api/imports/{pets['id']}/refresh/")

    assert response.status_code == 200, response.content
    assert tools_of("pets") == {
        "pets.pets_list_pets": True,
        "pets.pets_create_pet": False,
    }
    changes = response.json()["changes"]
    assert changes["added"] == ["pets.pets_create_pet"]
    assert changes["removed"] == ["pets.pets_list_pets"]
    created = next(t for t in response.json()["tools"] if not t["missing"])
    assert created["review"] == "new"  # held until staff approve it
    approved = admin.post(
        f"/api/imports/{pets['id']}/approve/",
        {"tool": created["full_name"], "digest": created["digest"]},
        format="json",
    )
    assert approved.status_code == 200, approved.content
    session = start_session(alice, agent)
    say(alice, session, 'add a pet name="rex"')
    added = responses_of(events_of(alice, session))["pets_create_pet"]
    assert added == {"added": {"name": "rex"}}


def test_a_failed_refresh_keeps_the_catalog_and_records_the_error(
    pets, admin, petstore
):
    petstore.routes["/openapi.json"] = Reply(500, b"down")
    response = admin.post(f"/api/imports/{pets['id']}/refresh/")

    assert response.status_code == 502
    assert "HTTP 500" in response.json()["detail"]
    assert tools_of("pets") == {"pets.pets_list_pets": False}
    assert "HTTP 500" in ToolImport.objects.get().last_error


# Deleting.


def test_deleting_an_import_keeps_its_tools_missing_with_grants_and_audit(
    calc, admin, alice, start_session, say
):
    granted_only("calc", alice)
    agent = agent_using("calc", "To add two numbers, use calc_add.")
    say(alice, start_session(alice, agent), "add a=2 b=3")
    response = admin.delete(f"/api/imports/{calc['id']}/")

    assert response.status_code == 204
    assert not ToolImport.objects.exists()
    assert Toolset.objects.get(name="calc").missing is True
    assert set(tools_of("calc").values()) == {True}
    assert Grant.objects.filter(toolset__name="calc", user=alice).exists()
    assert ToolCall.objects.get().tool.full_name == "calc.calc_add"
    run = say(alice, start_session(alice, agent), "add a=2 b=3")
    assert run["status"] == "succeeded"  # the agent runs without it
    assert ToolCall.objects.count() == 1


def test_registering_a_deleted_import_again_takes_its_toolset_back(
    pets, admin, alice, petstore
):
    granted_only("pets", alice)
    admin.delete(f"/api/imports/{pets['id']}/")
    again = register(
        admin,
        kind="openapi",
        name="pets",
        url=petstore.url("/openapi.json"),
        allow_private_network=True,
    )

    assert again["toolset"] == "pets"
    assert tools_of("pets") == {"pets.pets_list_pets": False}
    assert access.is_allowed(user_id=alice.pk, tool="pets.pets_list_pets")


# Who may, and what is refused.


def test_only_staff_may_see_or_change_imports(pets, alice, api_for):
    client = api_for(alice)
    assert client.get("/api/imports/").status_code == 403
    assert client.get(f"/api/imports/{pets['id']}/").status_code == 403
    assert client.post(f"/api/imports/{pets['id']}/refresh/").status_code == 403
    assert client.delete(f"/api/imports/{pets['id']}/").status_code == 403
    refused = client.post(
        "/api/imports/",
        {"kind": "openapi", "name": "x", "spec": "{}"},
        format="json",
    )
    assert refused.status_code == 403
    assert ToolImport.objects.count() == 1


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"kind": "mcp", "name": "x", "command": ["a"], "url": "http://h/mcp"}, None),
        ({"kind": "mcp", "name": "Bad Name", "command": ["a"]}, "name"),
        ({"kind": "mcp", "name": "x", "spec": "{}"}, "spec"),
        ({"kind": "mcp", "name": "x", "url": "ftp://h/"}, "url"),
        ({"kind": "openapi", "name": "x", "spec": "{}", "path": "/x"}, None),
        ({"kind": "rest", "name": "x"}, "kind"),
        ({"kind": "mcp", "name": "x", "command": "not a list"}, "command"),
    ],
)
def test_a_bad_registration_is_refused_with_field_errors(admin, fields, field):
    response = admin.post("/api/imports/", fields, format="json")

    assert response.status_code == 400
    assert set(response.json()) == {field or "non_field_errors"}
    assert not ToolImport.objects.exists()


def test_an_unreachable_spec_is_refused_and_nothing_is_stored(admin, petstore):
    response = admin.post(
        "/api/imports/",
        {
            "kind": "openapi",
            "name": "pets",
            "url": petstore.url("/nowhere.json"),
            "allow_private_network": True,
        },
        format="json",
    )

    assert response.status_code == 400
    assert "HTTP 404" in response.json()["url"][0]
    assert not ToolImport.objects.exists()
    assert not Toolset.objects.exists()


def test_an_mcp_server_that_does_not_start_is_refused(admin, tmp_path):
    command = [sys.executable, str(tmp_path / "no_such_server.py")]
    response = admin.post(
        "/api/imports/",
        {"kind": "mcp", "name": "gone", "command": command},
        format="json",
    )

    assert response.status_code == 400
    assert "could not be listed" in response.json()["command"][0]
    assert not Toolset.objects.exists()


def test_a_name_taken_by_another_toolset_is_refused(pets, admin, stdio_command):
    again = admin.post(
        "/api/imports/",
        {"kind": "mcp", "name": "pets", "command": stdio_command},
        format="json",
    )

    assert again.status_code == 400
    assert "already named" in again.json()["name"][0]


def test_secrets_are_never_returned_nor_logged(admin, stdio_command, caplog):
    caplog.set_level(logging.DEBUG)
    created = admin.post(
        "/api/imports/",
        {
            "kind": "mcp",
            "name": "calc",
            "command": [*stdio_command, "--token", SECRET],
            "env": {"TOKEN": SECRET},
        },
        format="json",
    )
    listed = admin.get("/api/imports/")
    detail = admin.get(f"/api/imports/{created.json()['id']}/")

    refreshed = admin.post(f"/api/imports/{created.json()['id']}/refresh/")

    for response in (created, listed, detail, refreshed):
        assert SECRET not in response.content.decode()
    assert detail.json()["registration"]["env_names"] == ["TOKEN"]
    assert "import registered import=calc" in caplog.text
    assert SECRET not in caplog.text
    stored = ToolImport.objects.values_list("registration", flat=True).get()
    assert SECRET not in json.dumps(stored)  # sealed at rest


def test_a_registration_sealed_under_another_key_says_so_and_keeps_its_listing(
    admin, stdio_command, settings
):
    created = admin.post(
        "/api/imports/",
        {"kind": "mcp", "name": "calc", "command": stdio_command},
        format="json",
    ).json()
    settings.TOOLCRIB_CREDENTIAL_KEY = "a key other than the one it was sealed with"

    detail = admin.get(f"/api/imports/{created['id']}/")
    refreshed = admin.post(f"/api/imports/{created['id']}/refresh/")

    assert detail.status_code == 200
    assert detail.json()["registration"] == created["registration"]
    assert refreshed.status_code == 502
    assert "no longer decrypts" in json.dumps(refreshed.json())


# The catalog sync (at startup, in every process) includes stored imports.


def test_the_catalog_sync_lists_stored_imports_and_survives_one_that_is_down(
    calc, pets, tools_file, petstore
):
    ToolImport.objects.filter(name="calc").update(
        registration={"name": "calc", "command": [sys.executable, "/nonexistent.py"]}
    )
    petstore.routes.clear()  # the spec is stored: the sync does not need it
    report = sync_catalog()

    assert report.failed == ["calc"]
    assert Toolset.objects.get(name="calc").missing is False
    assert set(tools_of("calc").values()) == {False}
    assert tools_of("pets") == {"pets.pets_list_pets": False}
    assert ToolImport.objects.get(name="calc").last_error != ""


# The admin.


@pytest.fixture
def admin_site(client, staff):
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    return client


def test_an_admin_registers_an_import_and_its_page_shows_no_secret(
    admin_site, stdio_command
):
    registration = {"name": "calc", "command": stdio_command, "env": {"T": SECRET}}
    added = admin_site.post(
        "/admin/toolsets/toolimport/add/",
        {"kind": "mcp", "registration": json.dumps(registration), "enabled": "on"},
    )
    row = ToolImport.objects.get()
    page = admin_site.get(f"/admin/toolsets/toolimport/{row.pk}/change/")

    assert added.status_code == 302, added.content
    assert tools_of("calc") == {"calc.calc_add": False, "calc.calc_echo": False}
    assert page.status_code == 200
    assert SECRET not in page.content.decode()
    assert admin_site.get("/admin/toolsets/toolimport/").status_code == 200


def test_the_admin_refuses_a_registration_it_cannot_read(admin_site, tmp_path):
    registration = {"name": "gone", "command": ["/nonexistent/server"]}
    page = admin_site.post(
        "/admin/toolsets/toolimport/add/",
        {"kind": "mcp", "registration": json.dumps(registration)},
    )

    assert page.status_code == 200
    assert "could not be listed" in page.content.decode()
    assert not ToolImport.objects.exists()


def test_the_admin_refresh_action_updates_the_catalog(admin_site, calc, tools_file):
    tools_file.write_text("echo")
    done = admin_site.post(
        "/admin/toolsets/toolimport/",
        {"action": "refresh_selected", "_selected_action": [calc["id"]]},
    )

    assert done.status_code == 302
    assert tools_of("calc") == {"calc.calc_add": True, "calc.calc_echo": False}


def test_the_schema_documents_the_imports_api(admin):
    paths = admin.get("/api/schema/?format=json").json()["paths"]

    assert {"/api/imports/", "/api/imports/{id}/", "/api/imports/{id}/refresh/"} <= set(
        paths
    )


def test_an_agent_defined_over_the_api_may_use_an_imported_toolset(pets, admin):
    fields = {"name": "petter", "model": "offline/demo", "toolsets": ["pets"]}
    created = admin.post("/api/agents/", fields, format="json")
    unknown = admin.post(
        "/api/agents/", {**fields, "name": "other", "toolsets": ["nope"]}, format="json"
    )

    assert created.status_code == 201, created.content
    assert unknown.status_code == 400
    assert "nope" in unknown.json()["toolsets"][0]


def test_an_agent_still_answers_when_its_imported_server_is_down(
    calc, alice, start_session, say, events_of
):
    agent = agent_using("calc", "To add two numbers, use calc_add.")
    row = ToolImport.objects.get(name="calc")
    row.registration = {"name": "calc", "command": [sys.executable, "/nonexistent.py"]}
    row.save()
    session = start_session(alice, agent)
    run = say(alice, session, "add a=2 b=3")

    assert run["status"] == "succeeded"
    assert responses_of(events_of(alice, session)) == {}


def test_a_name_taken_by_a_code_toolset_is_refused(admin, settings):
    settings.TOOLCRIB_TOOLSETS = {"rockets": "tests.toolsets.tools"}
    response = admin.post(
        "/api/imports/",
        {"kind": "openapi", "name": "rockets", "url": "http://127.0.0.1:9/x.json"},
        format="json",
    )

    assert response.status_code == 400
    assert "in settings" in response.json()["name"][0]
