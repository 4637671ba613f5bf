"""Two agents each holding an `AdminTools` class of their own: two catalog
toolsets, named by where each class is defined, governed and audited apart; a
class whose name no other class has keeps its plain name."""

import pytest

from tests.toolsets import twins
from tests.toolsets.conftest import toolset
from toolsets import grants, toolset_names
from toolsets.models import ToolCall, Toolset

pytestmark = pytest.mark.django_db(transaction=True)

TWINS = [
    "tests.toolsets.twins.billing.billing_agent",
    "tests.toolsets.twins.support.support_agent",
]


@pytest.fixture(autouse=True)
def _twins(toolcrib_settings):
    toolcrib_settings.TOOLCRIB_AGENTS = [*toolcrib_settings.TOOLCRIB_AGENTS, *TWINS]
    twins.CLOSED.clear()


def responses_in(frames: list[dict]) -> dict[str, dict]:
    return {
        r["name"]: r["response"]
        for f in frames
        for r in f["event"]["function_responses"]
    }


def test_each_admin_tools_class_is_a_toolset_of_its_own(catalog):
    assert catalog["billing__admin_tools.close_invoice"].toolset.description == (
        "Billing administration."
    )
    assert catalog["support__admin_tools.close_ticket"].toolset.description == (
        "Support administration."
    )
    assert not Toolset.objects.filter(name="admin_tools").exists()


def test_a_class_no_other_class_is_named_like_keeps_its_name(catalog):
    assert "ledger_tools.read_ledger" in catalog
    assert "simple_math_toolset.calculator_add_numbers" in catalog  # the demo's


def test_a_class_named_like_a_settings_toolset_is_not_merged_into_it(catalog):
    assert "support__rockets.count_rockets" in catalog
    assert "rockets.count_rockets" not in catalog
    assert "rockets.launch_rocket" in catalog  # the settings toolset, as it was


def test_a_deny_on_one_admin_tools_leaves_the_other_alone(
    catalog, alice, start_session, say, events_of
):
    grant, _ = grants.grant_tool(
        target=toolset("billing__admin_tools"), effect="deny", user=alice
    )
    billing = start_session(alice, "billing_agent")
    support = start_session(alice, "support_agent")

    say(alice, billing, "close it")
    say(alice, support, "close it")

    assert twins.CLOSED == ["ticket 9"]
    refused = responses_in(events_of(alice, billing))["close_invoice"]
    assert f"grant #{grant.pk}" in refused["error_message"]
    audit = dict(ToolCall.objects.values_list("tool_full_name", "status"))
    assert audit == {
        "billing__admin_tools.close_invoice": ToolCall.Status.DENIED,
        "support__admin_tools.close_ticket": ToolCall.Status.OK,
    }
    denied = ToolCall.objects.get(status=ToolCall.Status.DENIED)
    assert "toolset billing__admin_tools" in denied.access_rule


def test_the_agents_api_names_each_agents_own_toolset(catalog, alice, api_for):
    billing = api_for(alice).get("/api/agents/billing_agent/tools/").json()
    support = api_for(alice).get("/api/agents/support_agent/tools/").json()

    assert {t["full_name"]: t["toolset"] for t in billing} == {
        "billing__admin_tools.close_invoice": "billing__admin_tools",
        "ledger_tools.read_ledger": "ledger_tools",
    }
    assert {t["full_name"]: t["toolset"] for t in support} == {
        "support__admin_tools.close_ticket": "support__admin_tools",
        "support__rockets.count_rockets": "support__rockets",
    }


def test_each_admin_tools_runs_directly_under_its_own_name(catalog, alice, api_for):
    for name, args in [
        ("support__admin_tools.close_ticket", {"ticket": "3"}),
        ("billing__admin_tools.close_invoice", {"invoice": "4"}),
    ]:
        answer = api_for(alice).post(
            f"/api/tools/{name}/invoke/", {"args": args}, format="json"
        )
        assert answer.status_code == 200, answer.content

    assert twins.CLOSED == ["ticket 3", "invoice 4"]


def test_names_do_not_depend_on_the_order_agents_load_in(toolcrib_settings):
    forward = dict(toolset_names.class_toolset_names())
    toolcrib_settings.TOOLCRIB_AGENTS = list(
        reversed(toolcrib_settings.TOOLCRIB_AGENTS)
    )

    assert toolset_names.class_toolset_names() == forward


def test_a_name_takes_as_much_of_the_module_path_as_tells_classes_apart():
    names = toolset_names.qualified_names(
        "admin_tools",
        ["acme.billing.agent.AdminTools", "acme.support.agent.AdminTools"],
    )

    assert names == {
        "acme.billing.agent.AdminTools": "billing_agent__admin_tools",
        "acme.support.agent.AdminTools": "support_agent__admin_tools",
    }
