"""Tool availability as the reference (seed 004) specifies it, with its own examples:
the loader and gating patterns, middleware that refuses with corrective feedback."""

import pytest

from tests.toolsets import exposed, seed004
from tests.toolsets.conftest import tool, toolset
from toolsets import grants
from toolsets.catalog import sync_catalog
from toolsets.models import Tool, ToolCall, Toolset

pytestmark = pytest.mark.django_db(transaction=True)

SEED_AGENTS = [
    f"tests.toolsets.seed004.{name}"
    for name in (
        "math_agent",
        "hasty_math_agent",
        "clashing_math_agent",
        "record_agent",
        "guarded_record_agent",
    )
]


@pytest.fixture(autouse=True)
def _seed_agents(toolcrib_settings):
    toolcrib_settings.TOOLCRIB_AGENTS = [
        *toolcrib_settings.TOOLCRIB_AGENTS,
        *SEED_AGENTS,
    ]
    exposed.SEEN.clear()
    seed004.UPDATED.clear()
    seed004._last_fetched_id = None


def offered(step: int) -> list[str]:
    return exposed.SEEN[step][0]


def responses(frames: list[dict]) -> dict[str, list]:
    found: dict[str, list] = {}
    for frame in frames:
        for response in frame["event"]["function_responses"]:
            found.setdefault(response["name"], []).append(response["response"])
    return found


def audit() -> list[tuple[str, str, str]]:
    calls = ToolCall.objects.order_by("started_at")
    return list(calls.values_list("tool_full_name", "status", "result_summary"))


# The loader pattern.


def test_the_loader_adds_functions_the_agent_never_declared(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "math_agent")

    say(alice, session, "What is 5 factorial?")

    assert offered(0) == ["load_math_tools"]
    assert offered(1) == ["factorial", "fibonacci", "load_math_tools"]
    assert responses(events_of(alice, session))["factorial"] == [{"result": "5! = 120"}]
    assert [(name, status) for name, status, _ in audit()] == [
        ("math_agent.load_math_tools", "ok"),
        ("math_agent.factorial", "ok"),
    ]


def test_added_tools_are_catalogued_under_the_adding_tools_toolset(
    catalog, alice, start_session, say
):
    say(alice, start_session(alice, "math_agent"), "What is 5 factorial?")

    added = Tool.objects.get(full_name="math_agent.fibonacci")
    assert added.toolset == toolset("math_agent")
    assert added.parameters["properties"]["n"]["description"] == (
        "The 0-based index in the Fibonacci sequence."
    )
    assert not added.missing


def test_added_tools_are_reset_at_the_end_of_the_run(
    catalog, alice, start_session, say
):
    session = start_session(alice, "math_agent")

    say(alice, session, "What is 5 factorial?")
    exposed.SEEN.clear()
    say(alice, session, "And 6?")

    assert offered(0) == ["load_math_tools"]


def test_an_added_tool_is_offered_from_the_next_step_only(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "hasty_math_agent")

    say(alice, session, "5!")

    factorial = responses(events_of(alice, session))["factorial"][0]
    assert factorial["error_message"] == (
        "Tool factorial is not available to you: "
        "factorial is not a tool of agent HastyMathAgent."
    )
    audited = ToolCall.objects.get(tool_name="factorial")
    assert audited.attempts == 0
    # The refusal names itself as the audit does: the timeline's call line shows it.
    assert factorial["outcome"] == audited.status == "denied"
    assert offered(1) == ["factorial", "fibonacci", "load_math_tools"]


def test_a_batch_with_a_name_clash_adds_nothing(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "clashing_math_agent")

    say(alice, session, "3!")

    loaded = responses(events_of(alice, session))["load_with_clash"][0]["result"]
    assert loaded == "Error: a different tool is already named factorial"
    assert offered(1) == ["factorial", "load_with_clash"]  # no fibonacci
    assert responses(events_of(alice, session))["factorial"] == [{"result": "3! = 6"}]


def test_an_added_tool_a_user_is_denied_is_never_offered_nor_run(
    catalog, alice, bob, start_session, say, events_of
):
    say(bob, start_session(bob, "math_agent"), "What is 5 factorial?")  # catalogued
    grants.grant_tool(target=tool("math_agent.factorial"), effect="deny", user=alice)
    exposed.SEEN.clear()
    session = start_session(alice, "math_agent")

    say(alice, session, "What is 5 factorial?")

    assert offered(1) == ["fibonacci", "load_math_tools"]
    [refused] = responses(events_of(alice, session))["factorial"]
    assert "not available to you" in refused["error_message"]
    assert ToolCall.objects.get(user=alice, tool_name="factorial").status == "denied"


def test_added_tools_take_their_toolsets_default_policy(
    catalog, alice, start_session, say
):
    say(alice, start_session(alice, "math_agent"), "5!")  # catalogued
    grants.update_toolset(
        toolset=toolset("math_agent"), default_policy=Toolset.Policy.GRANTED_ONLY
    )
    grants.grant_tool(
        target=tool("math_agent.load_math_tools"), effect="allow", user=alice
    )
    exposed.SEEN.clear()

    say(alice, start_session(alice, "math_agent"), "5!")

    assert offered(0) == ["load_math_tools"]
    assert offered(1) == ["load_math_tools"]  # factorial, fibonacci: no grant


def test_a_sync_does_not_stop_an_added_tool(catalog, alice, start_session, say):
    session = start_session(alice, "math_agent")
    say(alice, session, "5!")
    sync_catalog()
    assert tool("math_agent.factorial").missing  # no code declares it

    say(alice, session, "5!")

    assert not tool("math_agent.factorial").missing
    assert ToolCall.objects.filter(tool_name="factorial", status="ok").count() == 2


# The gating pattern.


def test_the_write_tool_is_offered_once_the_read_tool_ran(
    catalog, alice, start_session, say
):
    session = start_session(alice, "record_agent")

    say(alice, session, "Update record REC-42 to status 'in-progress'.")

    assert offered(0) == ["get_record"]
    assert offered(1) == ["get_record", "update_record"]
    assert seed004.UPDATED == [("REC-42", "in-progress")]
    exposed.SEEN.clear()
    say(alice, session, "again")
    assert offered(0) == ["get_record"]  # the gate re-arms every turn


# Middleware.


def test_middleware_refuses_with_corrective_feedback_as_a_gate(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "guarded_record_agent")

    say(alice, session, "Update record REC-7 to status 'in-progress'.")

    refused, done = responses(events_of(alice, session))["update_record"]
    assert refused["error_message"] == (
        "Error: you must fetch record 'REC-7' before updating it. "
        "Last fetched record was 'REC-42'."
    )
    assert refused["outcome"] == "gated"
    assert done == {"result": "Updated record REC-42 to status 'in-progress'."}
    assert seed004.UPDATED == [("REC-42", "in-progress")]  # REC-7 never ran
    calls = ToolCall.objects.filter(tool_name="update_record").order_by("started_at")
    assert [(c.status, c.attempts) for c in calls] == [("gated", 0), ("ok", 1)]
    assert "fetch record 'REC-7'" in calls[0].result_summary
