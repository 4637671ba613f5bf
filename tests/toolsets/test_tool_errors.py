"""A tool that raises, as the GoAgent tool API (seeds/003) has it: the model gets
a ToolResult with the error and the turn goes on; the audit says `error`."""

import pytest

from tests.toolsets import goagent
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

GO_AGENTS = [
    f"tests.toolsets.goagent.{name}" for name in ("go_agent", "strict", "careful")
]


@pytest.fixture(autouse=True)
def _go_agents(toolcrib_settings):
    toolcrib_settings.TOOLCRIB_AGENTS = [*toolcrib_settings.TOOLCRIB_AGENTS, *GO_AGENTS]
    goagent.HEARD.clear()


def responses_in(frames: list[dict], name: str) -> list[dict]:
    return [
        r for f in frames for r in f["event"]["function_responses"] if r["name"] == name
    ]


def audit() -> list[tuple[str, str, str]]:
    calls = ToolCall.objects.order_by("started_at", "id")
    return list(calls.values_list("tool_name", "status", "result_summary"))


def test_a_tool_that_raises_answers_the_model_and_the_turn_goes_on(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "go_agent")

    run = say(alice, session, "process nothing, then add")

    assert run["status"] == "succeeded"
    error = "my_tool failed: ValueError: input is empty: nothing to process"
    assert goagent.HEARD[1][-1] == {"name": "my_tool", "error": error}
    assert goagent.HEARD[2][-1] == {"name": "add", "result": 5}  # it went on
    frames = events_of(alice, session)
    [failed] = responses_in(frames, "my_tool")
    assert (failed["status"], failed["response"]) == ("error", {"error": error})
    assert responses_in(frames, "add")[0]["status"] == "ok"
    assert audit() == [
        ("my_tool", "error", "ValueError: input is empty: nothing to process"),
        ("add", "ok", "5"),
    ]
    assert ToolCall.objects.get(tool_name="my_tool").attempts == 1


def test_an_agent_can_choose_to_fail_its_turn_when_a_tool_raises(
    catalog, alice, start_session, say, toolcrib_settings
):
    toolcrib_settings.TOOLCRIB_TOOL_ERRORS_FAIL_TURN = ["strict"]
    session = start_session(alice, "strict")

    run = say(alice, session, "process nothing, then add")

    assert run["status"] == "failed"
    assert "input is empty" in run["error"]
    assert len(goagent.HEARD) == 1  # the model was not asked again
    assert audit() == [
        ("my_tool", "error", "ValueError: input is empty: nothing to process")
    ]


def test_the_agents_own_error_callback_answers_first(
    catalog, alice, start_session, say
):
    run = say(alice, start_session(alice, "careful"), "process nothing")

    assert run["status"] == "succeeded"
    assert goagent.HEARD[1][-1] == {
        "name": "my_tool",
        "error": "please rephrase (input is empty: nothing to process)",
        "handled_by": "agent",
    }
    assert audit()[0][:2] == ("my_tool", "error")
