"""agents.adk.builder: an agent tree built once, and again after a change; code
agents loaded, and a broken one refused with its error while the others load."""

import pytest

from agents.adk.builder import (
    AgentBuildError,
    agent_for,
    load_code_agent,
    sync_code_agents,
)
from agents.models import AgentSpec
from tests.agents import code_modules

pytestmark = pytest.mark.django_db


def spec(name: str, **fields) -> AgentSpec:
    return AgentSpec.objects.create(name=name, model="offline", **fields)


def fresh(row: AgentSpec) -> AgentSpec:
    return AgentSpec.objects.get(pk=row.pk)


def test_the_tree_is_kept_while_nothing_changes():
    root = spec("desk", instruction="Route questions.")
    root.sub_agents.add(spec("billing"), spec("accounts"))

    first = agent_for(fresh(root))

    assert agent_for(fresh(root)) is first
    assert [sub.name for sub in first.sub_agents] == ["accounts", "billing"]


def test_a_sub_agent_added_or_removed_is_in_the_next_tree():
    root = spec("helpdesk")
    billing, refunds = spec("billing_team"), spec("refunds_team")
    root.sub_agents.add(billing)
    assert [sub.name for sub in agent_for(fresh(root)).sub_agents] == ["billing_team"]

    root.sub_agents.add(refunds)
    assert [sub.name for sub in agent_for(fresh(root)).sub_agents] == [
        "billing_team",
        "refunds_team",
    ]

    root.sub_agents.remove(billing)
    assert [sub.name for sub in agent_for(fresh(root)).sub_agents] == ["refunds_team"]


def test_a_change_to_a_sub_agents_spec_is_in_the_next_tree():
    root = spec("frontdesk")
    child = spec("night_shift", instruction="Answer briefly.")
    root.sub_agents.add(child)
    assert agent_for(fresh(root)).sub_agents[0].instruction == "Answer briefly."

    child.instruction = "Answer at length."
    child.save()

    assert agent_for(fresh(root)).sub_agents[0].instruction == "Answer at length."


@pytest.mark.parametrize("kind", list(code_modules.BROKEN))
def test_a_broken_agent_module_is_refused_with_a_readable_error(code_module, kind):
    source, says = code_modules.BROKEN[kind]
    path = f"{code_module(source)}.helper"

    with pytest.raises(AgentBuildError) as refused:
        load_code_agent(path)

    assert str(refused.value).startswith(path)
    assert says in str(refused.value)
    assert "Traceback" not in str(refused.value)


@pytest.mark.parametrize("kind", list(code_modules.BROKEN))
def test_every_good_agent_syncs_beside_a_broken_one(
    settings, code_module, caplog, kind
):
    source, says = code_modules.BROKEN[kind]
    broken = f"{code_module(source)}.helper"
    good = f"{code_module(code_modules.GOOD)}.assistant"
    settings.TOOLCRIB_AGENTS = [broken, "tests.agents.kettle.kettle", good]

    synced = sync_code_agents()

    assert [spec.dotted_path for spec in synced] == [
        "tests.agents.kettle.kettle",
        good,
    ]
    row = AgentSpec.objects.get(dotted_path=broken)
    assert (row.source, row.missing) == (AgentSpec.Source.CODE, True)
    assert f"code agent failed to load path={broken}" in caplog.text
    assert says in caplog.text
    assert "Traceback" not in caplog.text


def test_an_agent_refused_for_two_tools_of_one_name_is_kept_as_missing(settings):
    settings.TOOLCRIB_AGENTS = ["tests.agents.test_transfers.twins"]

    assert sync_code_agents() == []

    assert AgentSpec.objects.get(name="twins").missing
