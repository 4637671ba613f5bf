"""The catalog: code toolsets and code agents become rows; gone tools are kept, missing."""

import pytest
from django.core.management import call_command
from google.adk.agents import LlmAgent

from agents.adk.builder import AgentBuildError, sync_code_agents
from agents.adk.offline import OfflineLlm
from tests.toolsets import seed002
from tests.toolsets.conftest import tool, toolset
from tests.toolsets.gauges import FlakyToolset
from toolsets import access, grants
from toolsets.bindings import bindings_of_tree
from toolsets.catalog import sync_catalog
from toolsets.models import Grant, Tool, Toolset
from toolsets.toolset_names import snake_case

pytestmark = pytest.mark.django_db


def test_agent_plain_tools_form_a_toolset_named_after_the_agent(catalog):
    assert {
        "weather_sentiment.get_weather_report",
        "weather_sentiment.analyze_sentiment",
    } <= set(catalog)
    weather = toolset("weather_sentiment")
    assert weather.source == Toolset.Source.LOCAL
    assert weather.origin == "agent weather_sentiment"
    assert catalog["weather_sentiment.get_weather_report"].name == "get_weather_report"


def test_sub_agent_tools_belong_to_the_root_agent_and_adk_tools_are_not_catalogued(
    catalog,
):
    assert "customer_support.check_and_transfer" in catalog
    assert not [name for name in catalog if "transfer_to_agent" in name]
    assert not Toolset.objects.filter(name="support_agent").exists()


def test_unregistered_base_toolset_is_named_after_its_class_with_prefixed_tools(
    catalog,
):
    assert "calculator.greet_user" in catalog
    math = catalog["simple_math_toolset.calculator_add_numbers"]
    assert math.name == "calculator_add_numbers"
    assert math.toolset.origin == "demo.calculator.SimpleMathToolset"
    assert "simple_math_toolset.calculator_subtract_numbers" in catalog
    assert "gauge_toolset.dash_read_gauge" in catalog  # same class, other agent, prefix


def test_settings_toolsets_keep_their_registered_names(catalog):
    assert {"rockets.launch_rocket", "rockets.read_gauge", "rockets.login"} <= set(
        catalog
    )
    assert "launcher.launch_rocket" in catalog
    # A registered BaseToolset instance is named by its settings key, tools prefixed.
    assert {"gauges.gauges_read_gauge", "gauges.gauges_audited_read"} <= set(catalog)
    assert toolset("rockets").origin == "tests.toolsets.tools"
    assert toolset("gauges").description == "Gauges of the rocket."


def test_plain_tools_of_code_agents_ignore_settings_registration(catalog):
    # launch_rocket is registered in settings too, but rocketeer's copy is its own.
    assert "rocketeer.launch_rocket" in catalog
    assert "rocketeer.read_gauge" in catalog


def test_tool_schema_and_description_come_from_the_adk_declaration(catalog):
    report = catalog["weather_sentiment.get_weather_report"]
    assert report.parameters["properties"]["city"]["type"] == "string"
    assert report.parameters["required"] == ["city"]
    assert report.description.startswith("Retrieves the current weather report")
    add = catalog["simple_math_toolset.calculator_add_numbers"]
    assert set(add.parameters["properties"]) == {"a", "b"}  # tool_context is not an arg


def test_risk_is_declared_or_guessed_from_the_verb(catalog):
    assert catalog["weather_sentiment.get_weather_report"].risk == Tool.Risk.READ
    assert catalog["rockets.delete_everything"].risk == Tool.Risk.DANGEROUS
    assert catalog["rockets.launch_rocket"].risk == Tool.Risk.WRITE
    assert catalog["gauges.gauges_audited_read"].risk == Tool.Risk.READ  # declared


def test_second_sync_changes_nothing(catalog):
    report = sync_catalog()

    assert not report.changed
    assert Tool.objects.count() == len(catalog)


def test_a_tool_that_disappears_is_marked_missing_not_deleted(
    catalog, settings, make_user
):
    alice = make_user("alice")
    grant, _ = grants.grant_tool(
        target=tool("launcher.launch_rocket"), effect="allow", user=alice
    )
    settings.TOOLCRIB_TOOLSETS = {
        name: path
        for name, path in settings.TOOLCRIB_TOOLSETS.items()
        if name != "launcher"
    }

    report = sync_catalog()

    assert report.missing == ["launcher.launch_rocket"]
    gone = tool("launcher.launch_rocket")
    assert gone.missing and gone.toolset.missing
    assert Grant.objects.get(pk=grant.pk).tool == gone
    assert access.explain(user_id=alice.pk, tool=gone.full_name).reason == "missing"


def test_a_tool_that_comes_back_is_no_longer_missing(catalog, settings):
    registered = dict(settings.TOOLCRIB_TOOLSETS)
    settings.TOOLCRIB_TOOLSETS = {}
    sync_catalog()
    settings.TOOLCRIB_TOOLSETS = registered

    report = sync_catalog()

    assert "rockets.launch_rocket" in report.updated
    assert not tool("rockets.launch_rocket").missing
    assert not toolset("rockets").missing


def test_a_toolset_that_cannot_list_its_tools_is_kept_as_it_was(catalog):
    FlakyToolset.down = True

    report = sync_catalog()

    assert report.failed == ["flaky"]
    assert not tool("flaky.read_gauge").missing


def test_admin_choices_survive_a_sync(catalog):
    grants.update_toolset(toolset=toolset("rockets"), default_policy="granted_only")
    grants.update_tool(tool=tool("rockets.read_gauge"), enabled=False, risk="dangerous")

    sync_catalog()

    assert toolset("rockets").default_policy == "granted_only"
    read_gauge = tool("rockets.read_gauge")
    assert not read_gauge.enabled and read_gauge.risk == "dangerous"


def test_new_toolsets_take_the_configured_default_policy(db, toolcrib_settings):
    toolcrib_settings.TOOLCRIB_TOOLSET_DEFAULT_POLICY = "granted_only"

    sync_catalog()

    assert toolset("rockets").default_policy == "granted_only"


def test_sync_tools_command_syncs_agents_then_tools(db, toolcrib_settings, capsys):
    call_command("sync_tools")

    out = capsys.readouterr().out
    assert "created: weather_sentiment.get_weather_report" in out
    assert "created: rocketeer.launch_rocket" in out
    call_command("sync_tools")
    assert "up to date" in capsys.readouterr().out


def test_demo_setup_syncs_the_catalog(db, capsys):
    call_command("demo_setup")

    assert Tool.objects.filter(
        full_name="weather_sentiment.get_weather_report"
    ).exists()


@pytest.mark.parametrize(
    ("name", "snake"),
    [
        ("SimpleMathToolset", "simple_math_toolset"),
        ("MCPToolset", "mcp_toolset"),
        ("OpenAPIToolset", "open_api_toolset"),
    ],
)
def test_snake_case_of_class_names(name, snake):
    assert snake_case(name) == snake


def clashing() -> LlmAgent:
    """Two toolsets that both have a tool named purge_records."""
    return LlmAgent(
        name="clashing",
        model=OfflineLlm(),
        tools=[seed002.MaintenanceTools(), seed002.RestrictedAdminTools()],
    )


def test_an_agent_whose_toolsets_share_a_tool_name_is_refused(db, toolcrib_settings):
    toolcrib_settings.TOOLCRIB_AGENTS = ["tests.toolsets.test_catalog.clashing"]
    sync_code_agents()

    report = sync_catalog()

    assert report.failed == ["clashing"]
    assert not Tool.objects.filter(name="purge_records").exists()
    with pytest.raises(AgentBuildError) as refused:
        bindings_of_tree(clashing(), app_name="clashing")
    assert str(refused.value) == (
        "agent clashing has two tools named 'purge_records' (in toolsets "
        "maintenance_tools and restricted_admin_tools); rename one, or give a "
        "toolset a tool_name_prefix"
    )
