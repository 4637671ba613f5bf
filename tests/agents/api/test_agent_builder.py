"""The agent builder's API: create, edit, versions, diff, rollback, duplicate,
archive, drafts; bad input is a 400 with field errors; every change is audited."""

import pytest

from agents.models import AgentSpec, Change

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user):
    return make_user("root", is_staff=True)


@pytest.fixture
def admin(staff, api_for):
    return api_for(staff)


def create(admin, **fields):
    body = {"name": "helper", "instruction": "Be brief.", "model": "offline/demo"}
    response = admin.post("/api/agents/", {**body, **fields}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_create_edit_versions_diff_rollback(admin, staff):
    create(admin)
    edited = admin.patch(
        "/api/agents/helper/",
        {"instruction": "Be brief.\nAnswer in French.", "starters": ["Bonjour?"]},
        format="json",
    )
    assert edited.status_code == 200, edited.content

    versions = admin.get("/api/agents/helper/versions/").json()
    assert [(v["number"], v["status"], v["author"]) for v in versions] == [
        (2, "published", "root"),
        (1, "published", "root"),
    ]
    diff = admin.get("/api/agents/helper/versions/diff/?a=1&b=2").json()
    assert [c["field"] for c in diff["changes"]] == ["instruction", "starters"]
    assert "+Answer in French." in diff["instruction_diff"]

    back = admin.post("/api/agents/helper/rollback/", {"version": 1}, format="json")
    assert back.status_code == 200, back.content
    assert back.json()["instruction"] == "Be brief."
    assert back.json()["starters"] == []
    versions = admin.get("/api/agents/helper/versions/").json()
    assert (versions[0]["number"], versions[0]["note"]) == (3, "rollback to v1")
    actions = set(
        Change.objects.filter(
            object_id=str(AgentSpec.objects.get(name="helper").pk)
        ).values_list("action", flat=True)
    )
    assert {"create", "update", "rollback", "version_published"} <= actions


def test_duplicate_then_archive_keeps_old_sessions_readable(
    admin, alice, api_for, start_session
):
    create(admin, starters=["Hi?"])
    copy = admin.post(
        "/api/agents/helper/duplicate/", {"name": "helper2"}, format="json"
    )
    assert copy.status_code == 201, copy.content
    assert (copy.json()["instruction"], copy.json()["starters"]) == (
        "Be brief.",
        ["Hi?"],
    )
    session = start_session(alice, "helper2")

    archived = admin.post("/api/agents/helper2/archive/")
    assert archived.json()["archived"] is True

    names = [a["name"] for a in api_for(alice).get("/api/agents/").json()]
    assert "helper2" not in names and "helper" in names
    refused = api_for(alice).post("/api/sessions/", {"agent": "helper2"}, format="json")
    assert refused.status_code == 400
    assert api_for(alice).get(f"/api/sessions/{session}/events/").status_code == 200
    assert admin.post("/api/agents/helper2/restore/").json()["archived"] is False


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"toolsets": ["nope"]}, "toolsets"),
        ({"tools": [{"toolset": "math", "tool": "nope"}]}, "tools"),
        ({"tools": [{"toolset": "nope", "tool": "x"}]}, "tools"),
        ({"tools": ["math.calculate"]}, "tools"),
        ({"sub_agents": ["ghost"]}, "sub_agents"),
        ({"model": "no-such-model-family"}, "model"),
        ({"tool_choice": "sometimes"}, "tool_choice"),
        ({"groups": ["no-such-group"]}, "groups"),
        ({"name": "x--draft"}, "name"),
        ({"instruction": "x" * 100_001}, "instruction"),
        ({"description": "d" * 2_001}, "description"),
    ],
)
def test_bad_agent_fields_are_400_with_field_errors(admin, body, field):
    response = admin.post("/api/agents/", {"name": "helper", **body}, format="json")
    assert response.status_code == 400
    assert field in response.json(), response.json()


def test_a_name_taken_in_another_case_is_400_on_create_and_duplicate(admin):
    create(admin)
    create(admin, name="other")

    clash = admin.post(
        "/api/agents/", {"name": "Helper", "instruction": "x"}, format="json"
    )
    copy = admin.post("/api/agents/other/duplicate/", {"name": "HELPER"}, format="json")

    said = {"name": ["An agent is named helper already: choose another name."]}
    assert (clash.status_code, clash.json()) == (400, said)
    assert (copy.status_code, copy.json()) == (400, said)
    edited = admin.patch("/api/agents/helper/", {"description": "d"}, format="json")
    assert edited.status_code == 200, edited.content


def test_a_model_of_a_connection_not_made_is_400_and_so_is_rolling_back_to_it(
    admin, staff
):
    refused = admin.post(
        "/api/agents/",
        {"name": "helper", "instruction": "x", "model": "ghost/llama3"},
        format="json",
    )
    assert refused.status_code == 400
    assert refused.json() == {
        "model": [
            "No model connection is named ghost. "
            "Staff add connections on the Models page."
        ]
    }
    admin.post(
        "/api/providers/",
        {"name": "ghost", "kind": "ollama", "base_url": "http://127.0.0.1:9"},
        format="json",
    )
    create(admin, model="ghost/llama3")
    admin.patch("/api/agents/helper/", {"model": "offline/demo"}, format="json")
    assert admin.delete("/api/providers/ghost/").status_code == 204

    back = admin.post("/api/agents/helper/rollback/", {"version": 1}, format="json")

    assert back.status_code == 400
    assert "No model connection is named ghost" in back.json()["model"][0]
    assert admin.get("/api/agents/helper/").json()["model"] == "offline/demo"


def test_name_clash_and_sub_agent_cycle_are_400(admin):
    create(admin)
    clash = admin.post("/api/agents/", {"name": "helper"}, format="json")
    assert clash.status_code == 400 and "name" in clash.json()
    create(admin, name="outer", sub_agents=["helper"])
    cycle = admin.patch("/api/agents/helper/", {"sub_agents": ["outer"]}, format="json")
    assert cycle.status_code == 400
    assert "cycle" in cycle.json()["sub_agents"][0]


def test_single_tools_are_the_only_ones_the_agent_has(admin):
    agent = create(admin, tools=[{"toolset": "math", "tool": "calculate"}])
    assert agent["tools"] == [{"toolset": "math", "tool": "calculate"}]
    options = admin.get("/api/agents/options/").json()
    assert "calculate" in options["toolsets"]["math"]


def test_code_agents_say_what_may_change(admin, demo_agents):
    code = admin.get("/api/agents/calculator/").json()
    assert code["editable"] == ["a2a", "groups", "retention_days", "tool_choice"]
    refused = admin.patch(
        "/api/agents/calculator/", {"instruction": "x"}, format="json"
    )
    assert refused.status_code == 400
    allowed = admin.patch(
        "/api/agents/calculator/", {"tool_choice": "none"}, format="json"
    )
    assert allowed.status_code == 200


def test_draft_is_tried_by_staff_and_published_for_everyone(
    admin, alice, api_for, start_session
):
    create(admin)
    draft = admin.patch(
        "/api/agents/helper/draft/", {"instruction": "Draft words."}, format="json"
    )
    assert draft.status_code == 200, draft.content
    assert admin.get("/api/agents/helper/").json()["instruction"] == "Be brief."
    tried = admin.post(
        "/api/sessions/", {"agent": "helper", "draft": True}, format="json"
    )
    assert tried.status_code == 201, tried.content
    assert tried.json()["draft"] is True
    tools = admin.get(f"/api/agents/{tried.json()['agent']}/tools/")
    assert tools.status_code == 200, tools.content  # the session page's tools panel
    refused = api_for(alice).post(
        "/api/sessions/", {"agent": "helper", "draft": True}, format="json"
    )
    assert refused.status_code == 400
    names = [a["name"] for a in admin.get("/api/agents/").json()]
    assert names == ["helper"]

    published = admin.post("/api/agents/helper/publish/")
    assert published.json()["instruction"] == "Draft words."
    statuses = [v["status"] for v in admin.get("/api/agents/helper/versions/").json()]
    assert statuses == ["published", "draft", "published"]


def test_a_discarded_draft_is_gone_and_its_sessions_use_the_published_agent(
    admin, alice, api_for, say
):
    create(admin)
    admin.patch("/api/agents/helper/draft/", {"instruction": "Draft."}, format="json")
    tried = admin.post(
        "/api/sessions/", {"agent": "helper", "draft": True}, format="json"
    ).json()
    assert api_for(alice).delete("/api/agents/helper/draft/").status_code == 403

    discarded = admin.delete("/api/agents/helper/draft/")

    assert discarded.status_code == 204
    agent = admin.get("/api/agents/helper/").json()
    assert agent["has_draft"] is False and agent["instruction"] == "Be brief."
    assert admin.get("/api/agents/helper/draft/").status_code == 404
    again = admin.delete("/api/agents/helper/draft/")
    assert again.status_code == 404
    assert again.json() == {"detail": "This agent has no draft."}
    session = admin.get(f"/api/sessions/{tried['id']}/").json()
    assert session["draft"] is False and session["agent"] == "helper"
    helper = AgentSpec.objects.get(name="helper")
    (change,) = Change.objects.filter(action="draft_discarded")
    assert (change.object_id, change.changes) == (
        str(helper.pk),
        {"sessions_moved": 1},
    )
    assert change.actor.username == "root"
    fresh = admin.patch(
        "/api/agents/helper/draft/", {"description": "New."}, format="json"
    )
    assert fresh.status_code == 200, fresh.content
    assert fresh.json()["instruction"] == "Be brief."


def test_a_code_agent_has_no_draft_to_discard(admin, demo_agents):
    answer = admin.delete("/api/agents/weather_sentiment/draft/")
    assert answer.status_code == 400
    assert answer.json() == {
        "detail": "Only agents made here have versions and drafts."
    }


def test_non_staff_have_no_builder(alice, api_for, admin):
    create(admin)
    client = api_for(alice)
    for path in (
        "/api/agents/helper/versions/",
        "/api/agents/helper/versions/diff/?a=1&b=1",
        "/api/agents/helper/draft/",
        "/api/agents/options/",
    ):
        assert client.get(path).status_code == 403, path
    assert (
        client.post("/api/agents/helper/rollback/", {"version": 1}).status_code == 403
    )
    assert (
        client.post("/api/agents/helper/duplicate/", {"name": "x"}).status_code == 403
    )
    assert client.post("/api/agents/helper/archive/").status_code == 403
    shown = client.get("/api/agents/helper/").json()
    assert "groups" not in shown
    assert (shown["editable"], shown["draft_of"], shown["has_draft"]) == (
        [],
        None,
        False,
    )


def test_a_draft_body_that_is_no_object_is_400(admin):
    create(admin)
    answer = admin.patch("/api/agents/helper/draft/", [1], format="json")
    assert answer.status_code == 400
    assert answer.json() == {"non_field_errors": ["Send a JSON object of fields."]}
