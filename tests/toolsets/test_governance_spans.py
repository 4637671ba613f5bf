"""Governance's spans: `toolcrib.governance` around the checks of one call, and
`toolcrib.tool.execute` around the policy's run of the tool, both under ADK's own
`execute_tool` span of the call; read back from the turn's stored spans."""

import pytest

from agents.models import RunSpan
from tests.toolsets.conftest import tool
from toolsets import grants

pytestmark = pytest.mark.django_db(transaction=True)


def spans_of(run_id: str) -> dict[str, RunSpan]:
    return {span.name: span for span in RunSpan.objects.filter(run_id=run_id)}


def test_an_allowed_call_is_checked_then_executed_under_adks_tool_span(
    catalog, alice, start_session, say
):
    session = start_session(alice, "rocketeer")

    run = say(alice, session, "go")

    spans = spans_of(run["id"])
    tool_span = spans["execute_tool launch_rocket"]
    governance = spans["toolcrib.governance"]
    execute = spans["toolcrib.tool.execute"]
    assert governance.parent_id == tool_span.span_id
    assert execute.parent_id == tool_span.span_id
    assert governance.attributes["toolcrib.tool"] == "rocketeer.launch_rocket"
    assert governance.attributes["toolcrib.decision"] == "allowed"
    assert governance.attributes["toolcrib.rule"] == (
        "toolset rocketeer is open to everyone"
    )
    assert governance.attributes["toolcrib.check"] == ""
    assert governance.attributes["toolcrib.call_id"].startswith("adk-")
    assert execute.attributes["toolcrib.outcome"] == "ok"
    assert execute.attributes["toolcrib.attempts"] == 1


def test_a_denied_call_names_the_check_and_rule_and_never_executes(
    catalog, alice, start_session, say
):
    grants.grant_tool(target=tool("rocketeer.launch_rocket"), effect="deny", user=alice)
    session = start_session(alice, "rocketeer")

    run = say(alice, session, "go")

    spans = spans_of(run["id"])
    governance = spans["toolcrib.governance"]
    assert governance.attributes["toolcrib.decision"] == "denied"
    assert governance.attributes["toolcrib.check"] == "Access"
    assert governance.attributes["toolcrib.rule"].startswith("denied by grant #")
    assert "toolcrib.tool.execute" not in spans
