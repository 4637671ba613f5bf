"""Tools inside an ADK 2.x Workflow are catalogued and governed as any tool is: an
LlmAgent node's tools, and a tool node's (a BaseTool put in the graph)."""

import pytest

from agents.adk.builder import sync_code_agents
from agents.models import Request
from tests.toolsets.conftest import tool
from toolsets import grants
from toolsets.catalog import sync_catalog
from toolsets.models import Tool, ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

FLOW = "tests.agents.workflow_agents.forecast_flow"
PLANNER = "tests.agents.workflow_agents.planner"


@pytest.fixture
def flow_catalog(db, toolcrib_settings):
    toolcrib_settings.TOOLCRIB_AGENTS = [
        *toolcrib_settings.TOOLCRIB_AGENTS,
        FLOW,
        PLANNER,
    ]
    sync_code_agents()
    sync_catalog()


def node_outputs(frames: list[dict]) -> dict[str, object]:
    return {
        f["event"]["node"]["path"]: f["event"]["node"]["output"]
        for f in frames
        if f["event"]["kind"] == "node_output"
    }


def test_the_catalog_walks_into_workflow_nodes(flow_catalog):
    names = set(
        Tool.objects.filter(toolset__name="forecast_flow").values_list(
            "full_name", flat=True
        )
    )

    assert names == {"forecast_flow.lookup_weather", "forecast_flow.shout"}
    # A workflow an agent calls as a tool: the workflow is a tool, and so is
    # every tool inside it.
    assert set(
        Tool.objects.filter(toolset__name="planner").values_list("full_name", flat=True)
    ) == {"planner.weather_check", "planner.lookup_weather", "planner.shout"}


def test_tools_inside_a_workflow_run_when_allowed_and_are_audited(
    flow_catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "forecast_flow")

    run = say(alice, session, "weather please")

    assert run["status"] == "succeeded", run
    outputs = node_outputs(events_of(alice, session))
    assert outputs["forecast_flow@1/shout@1"] == {"shout": "FORECAST DONE"}
    audit = dict(ToolCall.objects.values_list("tool_name", "status"))
    assert audit == {"lookup_weather": "ok", "shout": "ok"}


def test_a_denied_tool_node_is_refused_and_audited(
    flow_catalog, alice, start_session, say, events_of
):
    grant, _ = grants.grant_tool(
        target=tool("forecast_flow.shout"), effect="deny", user=alice
    )
    session = start_session(alice, "forecast_flow")

    say(alice, session, "weather please")

    refused = node_outputs(events_of(alice, session))["forecast_flow@1/shout@1"]
    assert refused["status"] == "error"
    assert f"grant #{grant.pk}" in refused["error_message"]
    audit = ToolCall.objects.get(tool_name="shout")
    assert audit.status == ToolCall.Status.DENIED
    assert audit.user == alice


def test_a_denied_tool_of_an_agent_node_is_refused_and_audited(
    flow_catalog, alice, start_session, say, events_of
):
    grants.grant_tool(
        target=tool("forecast_flow.lookup_weather"), effect="deny", user=alice
    )
    session = start_session(alice, "forecast_flow")

    say(alice, session, "weather please")

    responses = [
        r for f in events_of(alice, session) for r in f["event"]["function_responses"]
    ]
    assert [(r["name"], r["status"]) for r in responses] == [
        ("lookup_weather", "error")
    ]
    audit = ToolCall.objects.get(tool_name="lookup_weather")
    assert audit.status == ToolCall.Status.DENIED


def test_a_denied_tool_inside_a_workflow_an_agent_calls_is_refused_and_audited(
    flow_catalog, alice, start_session, say, events_of
):
    grants.grant_tool(target=tool("planner.shout"), effect="deny", user=alice)
    session = start_session(alice, "planner")

    say(alice, session, "check oslo")

    audit = dict(ToolCall.objects.values_list("tool_name", "status"))
    # The workflow's result is its last node's: the refusal, so an error.
    assert audit == {
        "weather_check": "error",
        "lookup_weather": "ok",
        "shout": "denied",
    }
    [result] = [
        r for f in events_of(alice, session) for r in f["event"]["function_responses"]
    ]
    assert result["name"] == "weather_check"
    assert result["response"]["status"] == "error"


SHAPES = "tests.agents.workflow_shapes"


@pytest.fixture
def shapes_catalog(db, toolcrib_settings):
    toolcrib_settings.TOOLCRIB_AGENTS = [
        *toolcrib_settings.TOOLCRIB_AGENTS,
        f"{SHAPES}.dynamic",
        f"{SHAPES}.concierge",
    ]
    sync_code_agents()
    sync_catalog()


def test_a_tool_a_node_runs_dynamically_is_governed_as_any_tool(
    shapes_catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "dynamic")

    run = say(alice, session, "go")

    frames = events_of(alice, session)
    audit = list(ToolCall.objects.values_list("tool_name", "status", "user__username"))
    assert (run["status"], audit) == ("succeeded", [("lookup_forecast", "ok", "alice")])
    assert node_outputs(frames)["dynamic@1/fetch_both@1"] == "dynamic Lima: rain"


def test_a_denied_tool_a_node_runs_dynamically_is_refused_and_audited(
    shapes_catalog, alice, start_session, say, events_of
):
    # Met at its first call (no static walk finds it), then denied like any tool.
    say(alice, start_session(alice, "dynamic"), "go")
    grant, _ = grants.grant_tool(
        target=tool("dynamic.lookup_forecast"), effect="deny", user=alice
    )
    session = start_session(alice, "dynamic")

    say(alice, session, "go")

    refused = node_outputs(events_of(alice, session))
    answer = refused["dynamic@1/fetch_both@1/lookup_forecast@1"]
    assert answer["status"] == "error"
    assert f"grant #{grant.pk}" in answer["error_message"]
    statuses = list(ToolCall.objects.order_by("pk").values_list("status", flat=True))
    assert statuses == ["ok", "denied"]


def test_an_agent_that_does_not_load_leaves_the_others_catalogued(shapes_catalog):
    # `concierge` wraps a workflow in an AgentTool (it does not load); the sync
    # goes on.
    assert Tool.objects.filter(toolset__name="calculator").exists()
    assert not Tool.objects.filter(toolset__name="concierge").exists()


@pytest.mark.parametrize(
    ("approved", "weather"),
    [(True, ["approved", "ok"]), (False, ["rejected"])],
)
def test_an_agent_nodes_tool_held_for_approval_resumes_the_workflow(
    flow_catalog,
    alice,
    make_user,
    api_for,
    start_session,
    say,
    events_of,
    approved,
    weather,
):
    staff = make_user("root", is_staff=True)
    marked = api_for(staff).patch(
        "/api/tools/forecast_flow.lookup_weather/",
        {"requires_approval": True},
        format="json",
    )
    assert marked.status_code == 200, marked.content
    session = start_session(alice, "forecast_flow")

    run = say(alice, session, "weather please")

    assert (run["status"], run["waiting_for"]) == ("waiting", "approval"), run
    [approval] = Request.objects.filter(session_id=session, kind="approval")
    decided = api_for(alice).post(
        f"/api/approvals/{approval.id}/decide/?wait=1",
        {"approved": approved},
        format="json",
    )
    assert decided.status_code == 200, decided.content
    assert decided.json()["status"] == "succeeded", decided.json()
    outputs = node_outputs(events_of(alice, session))
    # The workflow goes on from the agent node to its last node, once.
    assert outputs["forecast_flow@1/shout@1"] == {"shout": "FORECAST DONE"}
    rows = ToolCall.objects.order_by("pk").values_list("tool_name", "status")
    assert [status for name, status in rows if name == "lookup_weather"] == weather
    assert [status for name, status in rows if name == "shout"] == ["ok"]
