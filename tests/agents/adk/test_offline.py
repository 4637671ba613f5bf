"""The offline model driving the demo agents through a real ADK Runner, as a user sees it."""

from collections.abc import Sequence
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App
from google.adk.events import Event
from google.adk.models import LLMRegistry, LlmRequest
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools import FunctionTool
from google.genai import types

from agents.adk.offline import OfflineLlm, OfflineStep
from agents.adk.offline_matching import (
    ChosenCall,
    ToolSpec,
    agent_keywords,
    choose_call,
    fill_args,
    stem,
)
from demo.calculator import calculator
from demo.preferences import preferences
from demo.support import customer_support
from demo.weather import get_weather_report, weather_sentiment

APP = "demo"
LONDON = "The current weather in London is cloudy"


def make_runner(agent: LlmAgent) -> Runner:
    return Runner(
        app=App(name=APP, root_agent=agent), session_service=InMemorySessionService()
    )


async def new_session(runner: Runner, user_id: str = "alice") -> str:
    session = await runner.session_service.create_session(app_name=APP, user_id=user_id)
    return session.id


async def say(
    runner: Runner,
    session_id: str,
    text: str,
    *,
    user_id: str = "alice",
    run_config: RunConfig | None = None,
) -> list[Event]:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    stream = runner.run_async(
        user_id=user_id,
        session_id=session_id,
        new_message=message,
        run_config=run_config,
    )
    return [event async for event in stream]


async def chat(agent: LlmAgent, *texts: str) -> list[Event]:
    """Every event of a fresh session in which the user says each text in turn."""
    runner = make_runner(agent)
    session_id = await new_session(runner)
    return [event for text in texts for event in await say(runner, session_id, text)]


def calls(events: Sequence[Event]) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.args) for e in events for c in e.get_function_calls()]


def results(events: Sequence[Event]) -> list[dict[str, Any]]:
    return [r.response for e in events for r in e.get_function_responses()]


def answers(events: Sequence[Event]) -> list[str]:
    """The final texts the agents wrote, in order."""
    return [
        part.text
        for e in events
        if e.author != "user" and e.is_final_response() and e.content
        for part in e.content.parts or []
        if part.text
    ]


def picture(events: Sequence[Event]) -> list[tuple[str, Any]]:
    """What a user sees of each event: author, calls, results and text."""
    return [(e.author, calls([e]), results([e]), answers([e])) for e in events]


def request(*contents: types.Content, tools: Sequence[Any] = ()) -> LlmRequest:
    """A hand-made request from the agent "probe", declaring these functions."""
    declarations = [FunctionTool(f)._get_declaration() for f in tools]
    config = types.GenerateContentConfig(
        labels={"adk_agent_name": "probe"},
        tools=[types.Tool(function_declarations=declarations)] if tools else None,
    )
    return LlmRequest(contents=list(contents), config=config)


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def model(text: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(text=text)])


def test_offline_names_resolve_to_the_offline_model():
    assert LLMRegistry.resolve("offline/demo") is OfflineLlm
    assert LlmAgent(name="a", model="offline/anything").canonical_model.model == (
        "offline/anything"
    )


async def test_weather_question_calls_tool_and_answers_with_report():
    events = await chat(weather_sentiment, "weather in london?")

    assert calls(events) == [("get_weather_report", {"city": "london"})]
    assert events[0].get_function_calls()[0].id.startswith("adk-")
    assert results(events)[0]["status"] == "success"
    assert len(answers(events)) == 1
    assert answers(events)[0].startswith(LONDON)
    assert events[-1].usage_metadata.total_token_count > 0


async def test_feedback_after_report_is_acknowledged_as_negative():
    events = await chat(weather_sentiment, "weather in london?", "I don't like rain")

    assert calls(events)[1] == ("analyze_sentiment", {"text": "I don't like rain"})
    assert results(events)[1]["sentiment"] == "negative"
    assert "negative" in answers(events)[-1]


async def test_unknown_city_error_is_answered():
    events = await chat(weather_sentiment, "weather in Tokyo")

    assert calls(events) == [("get_weather_report", {"city": "Tokyo"})]
    assert results(events)[0]["status"] == "error"
    assert "'Tokyo' is not available" in answers(events)[0]


async def test_urgent_query_is_transferred_to_support_agent():
    events = await chat(customer_support, "this is urgent, i cant login", "thanks")

    assert calls(events) == [
        ("check_and_transfer", {"query": "this is urgent, i cant login"})
    ]
    transfers = [(e.author, e.actions.transfer_to_agent) for e in events]
    assert ("main_agent", "support_agent") in transfers
    assert [e.author for e in events if answers([e])] == [
        "support_agent",
        "support_agent",
    ]
    # Who answered is the event's author: the text carries no "[agent]" label.
    assert answers(events)[0] and not answers(events)[0].startswith("[")


async def test_query_matching_sub_agent_description_calls_transfer_to_agent():
    events = await chat(customer_support, "I need the support handler")

    assert calls(events) == [("transfer_to_agent", {"agent_name": "support_agent"})]
    assert [e.author for e in events if answers([e])] == ["support_agent"]


async def test_non_urgent_query_stays_with_main_agent():
    events = await chat(customer_support, "how do I export a chart?")

    assert calls(events) == []
    assert not any(e.actions.transfer_to_agent for e in events)
    assert answers(events) == ["You said: how do I export a chart?"]


async def test_preference_is_visible_from_another_session_of_the_same_user():
    runner = make_runner(preferences)
    first = await new_session(runner)

    events = await say(runner, first, 'set preference "theme" to "dark"')

    assert calls(events) == [
        ("update_user_preference", {"preference": "theme", "value": "dark"})
    ]
    second = await runner.session_service.get_session(
        app_name=APP, user_id="alice", session_id=await new_session(runner)
    )
    assert second.state["user:preferences"] == {"theme": "dark"}
    stranger = await runner.session_service.get_session(
        app_name=APP, user_id="bob", session_id=await new_session(runner, "bob")
    )
    assert "user:preferences" not in stranger.state


async def test_add_calls_prefixed_toolset_tool_and_sets_state():
    runner = make_runner(calculator)
    session_id = await new_session(runner)

    events = await say(runner, session_id, "add 2 and 3")

    assert calls(events) == [("calculator_add_numbers", {"a": 2, "b": 3})]
    assert results(events) == [{"status": "success", "result": 5}]
    assert "5" in answers(events)[0]
    session = await runner.session_service.get_session(
        app_name=APP, user_id="alice", session_id=session_id
    )
    assert session.state["last_math_operation"] == "addition"


async def test_subtract_calls_subtract_tool():
    events = await chat(calculator, "subtract 10 and 4")

    assert calls(events) == [("calculator_subtract_numbers", {"a": 10, "b": 4})]
    assert results(events)[0]["result"] == 6


async def test_streaming_yields_partials_then_one_whole_text_and_stores_none():
    runner = make_runner(weather_sentiment)
    session_id = await new_session(runner)
    sse = RunConfig(streaming_mode=StreamingMode.SSE)

    events = await say(runner, session_id, "weather in london?", run_config=sse)

    partials = [e.content.parts[0].text for e in events if e.partial]
    assert len(partials) > 1
    assert all(not e.get_function_calls() for e in events if e.partial)
    assert answers(events) == ["".join(partials)]
    assert LONDON in answers(events)[0]
    session = await runner.session_service.get_session(
        app_name=APP, user_id="alice", session_id=session_id
    )
    assert not any(e.partial for e in session.events)
    assert answers(session.events) == answers(events)


async def test_script_plays_its_steps_in_order():
    script = [
        OfflineStep.call("get_weather_report", city="paris"),
        OfflineStep.say("Paris it is."),
    ]
    agent = LlmAgent(
        name="scripted", model=OfflineLlm(script=script), tools=[get_weather_report]
    )

    events = await chat(agent, "anything at all")

    assert picture(events) == [
        ("scripted", [("get_weather_report", {"city": "paris"})], [], []),
        ("scripted", [], [results(events)[0]], []),
        ("scripted", [], [], ["Paris it is."]),
    ]
    assert "sunny" in results(events)[0]["report"]


async def test_script_runs_parallel_calls_then_reports_it_is_finished():
    step = OfflineStep.calls(
        [
            ("get_weather_report", {"city": "paris"}),
            ("get_weather_report", {"city": "x"}),
        ]
    )
    agent = LlmAgent(
        name="scripted", model=OfflineLlm(script=[step]), tools=[get_weather_report]
    )

    events = await chat(agent, "go")

    assert [args["city"] for _, args in calls(events)] == ["paris", "x"]
    assert [r["status"] for r in results(events)] == ["success", "error"]
    assert answers(events) == ["(script finished)"]


async def test_script_error_step_ends_the_turn_with_the_error():
    step = OfflineStep.fail("RESOURCE_EXHAUSTED", "quota used up")
    agent = LlmAgent(name="scripted", model=OfflineLlm(script=[step]))

    events = await chat(agent, "go")

    assert [(e.error_code, e.error_message) for e in events] == [
        ("RESOURCE_EXHAUSTED", "quota used up")
    ]
    assert events[-1].is_final_response()


async def test_same_input_gives_same_output():
    first = await chat(weather_sentiment, "weather in london?", "I don't like rain")
    second = await chat(weather_sentiment, "weather in london?", "I don't like rain")

    assert picture(first) == picture(second)


async def test_no_tool_is_called_when_nothing_matches():
    events = await chat(weather_sentiment, "hello there")

    assert calls(events) == []
    assert answers(events) == ["You said: hello there"]


async def test_contents_ending_with_a_model_turn_get_text_only():
    llm = OfflineLlm()
    turn = request(user("weather in london?"), model("ok"), tools=[get_weather_report])

    responses = [r async for r in llm.generate_content_async(turn)]

    assert len(responses) == 1
    assert responses[0].get_function_calls() == []
    assert responses[0].content.parts[0].text == "You said: weather in london?"


async def test_forced_tool_config_calls_the_allowed_tool():
    turn = request(user("whatever you like"), tools=[get_weather_report])
    turn.config.tool_config = types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(
            mode=types.FunctionCallingConfigMode.ANY,
            allowed_function_names=["get_weather_report"],
        )
    )

    responses = [r async for r in OfflineLlm().generate_content_async(turn)]

    assert [c.name for c in responses[0].get_function_calls()] == ["get_weather_report"]
    assert responses[0].get_function_calls()[0].id is None


def test_step_must_be_exactly_one_kind():
    with pytest.raises(ValueError):
        OfflineStep(text="hi", error_code="X")


def test_stemming_matches_word_forms():
    assert stem("urgent") == stem("urgency")
    assert stem("greetings") == stem("greet")
    assert stem("numbers") == stem("number")


STRING_PAIR = {
    "properties": {"preference": {"type": "string"}, "value": {"type": "string"}},
    "required": ["preference", "value"],
}
TWO_INTS = {
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
ONE_STRING = {"properties": {"city": {"type": "string"}}, "required": ["city"]}


@pytest.mark.parametrize(
    ("schema", "text", "expected"),
    [
        (
            STRING_PAIR,
            "set preference=theme value='dark'",
            {"preference": "theme", "value": "dark"},
        ),
        (
            STRING_PAIR,
            'set "theme" to "dark"',
            {"preference": "theme", "value": "dark"},
        ),
        (STRING_PAIR, "set theme to dark", None),
        (TWO_INTS, "add 2 and 3", {"a": 2, "b": 3}),
        (TWO_INTS, "add b=3 to 7", {"a": 7, "b": 3}),
        (TWO_INTS, "add 2", None),
        (ONE_STRING, "weather in New York?", {"city": "New York"}),
        (ONE_STRING, "london", {"city": "london"}),
    ],
)
def test_args_are_filled_from_the_text(schema, text, expected):
    assert fill_args(schema, text) == expected


CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def test_a_tools_words_are_worked_out_once_and_a_users_text_is_not_kept():
    """Each model call ranks every tool by its name, description and instruction:
    the same words each time. What the user wrote differs every call, and is not
    kept."""
    specs = [
        ToolSpec("get_forecast", "The weather forecast for a city.", CITY),
        ToolSpec("convert_money", "Convert an amount between currencies.", CITY),
    ]
    instruction = "Use get_forecast for the weather; convert_money for prices."
    agent_keywords.cache_clear()
    first = choose_call("forecast for city=oslo", specs, instruction)
    kept = agent_keywords.cache_info().currsize

    again = [
        choose_call(f"forecast please for city=bergen{n}", specs, instruction)
        for n in range(5)
    ]

    assert first == ChosenCall("get_forecast", {"city": "oslo"})
    assert {call.name for call in again} == {"get_forecast"}
    assert agent_keywords.cache_info().currsize == kept
    assert agent_keywords.cache_info().hits >= 5 * kept


def _response_part(response: dict[str, Any]) -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(name="lookup", response=response)
    )


def test_prompt_tokens_count_each_payloads_words_as_it_is_now(monkeypatch):
    """The prompt's token count is the request's words (one per word): a result
    counted in an earlier step counts the same again, another result of the same
    shape by its own words, and so after the kept counts are let go."""
    from agents.adk import offline

    monkeypatch.setattr(offline, "PAYLOADS_KEPT", 2)
    short = {"report": "sunny"}
    long = {"report": "cloudy with rain later in the afternoon"}
    contents = [
        types.Content(role="user", parts=[types.Part(text="weather in oslo")]),
        types.Content(role="user", parts=[_response_part(short)]),
    ]
    first = offline.count_request_words(LlmRequest(contents=contents))
    again = offline.count_request_words(LlmRequest(contents=contents))
    contents.append(types.Content(role="user", parts=[_response_part(long)]))
    grown = offline.count_request_words(LlmRequest(contents=contents))
    others = [
        types.Content(role="user", parts=[_response_part({"n": str(n)})])
        for n in range(3)
    ]
    offline.count_request_words(LlmRequest(contents=others))  # past PAYLOADS_KEPT
    after = offline.count_request_words(LlmRequest(contents=contents))

    assert first == again == 3 + (1 + len(str(short).split()))
    assert grown == first + 1 + len(str(long).split())
    assert after == grown
