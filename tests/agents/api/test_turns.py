"""A turn end to end over the REST API: demo scenarios, events and state as a user sees them."""

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def kinds(frames: list[dict]) -> list[str]:
    return [frame["event"]["kind"] for frame in frames]


def test_weather_turn_records_call_result_and_answer(
    alice, demo_agents, start_session, say, events_of
):
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "weather in london?")

    assert run["status"] == "succeeded"
    frames = events_of(alice, session)
    assert kinds(frames) == [
        "run_started",
        "user_message",
        "function_call",
        "function_response",
        "text",
        "run_finished",
    ]
    assert [f["seq"] for f in frames] == list(range(1, len(frames) + 1))
    call = frames[2]["event"]["function_calls"][0]
    assert call["name"] == "get_weather_report"
    assert call["args"] == {"city": "london"}
    assert call["id"]
    result = frames[3]["event"]["function_responses"][0]
    assert result["id"] == call["id"]
    assert result["response"]["status"] == "success"
    assert "cloudy" in frames[4]["event"]["text"]
    assert frames[-1]["event"]["run"]["status"] == "succeeded"


def test_feedback_turn_uses_sentiment_tool(
    alice, demo_agents, start_session, say, events_of
):
    session = start_session(alice, "weather_sentiment")
    say(alice, session, "weather in paris?")
    last = events_of(alice, session)[-1]["seq"]

    say(alice, session, "I don't like rain")

    frames = events_of(alice, session, after=last)
    assert all(frame["seq"] > last for frame in frames)
    calls = [
        f["event"]["function_calls"][0]
        for f in frames
        if f["event"]["kind"] == "function_call"
    ]
    assert [c["name"] for c in calls] == ["analyze_sentiment"]
    responses = [f for f in frames if f["event"]["kind"] == "function_response"]
    assert (
        responses[0]["event"]["function_responses"][0]["response"]["sentiment"]
        == "negative"
    )


def test_support_transfer_hands_over_to_support_agent(
    alice, demo_agents, start_session, say, events_of
):
    session = start_session(alice, "customer_support")

    say(alice, session, "this is urgent, i cant login")

    frames = events_of(alice, session)
    transfers = [
        f["event"]["transfer"] for f in frames if f["event"]["kind"] == "transfer"
    ]
    assert transfers == [{"from": "main_agent", "to": "support_agent"}]
    answers = [f["event"] for f in frames if f["event"]["kind"] == "text"]
    assert answers[-1]["author"] == "support_agent"


def test_calculator_state_and_result(
    alice, demo_agents, start_session, say, events_of, api_for
):
    session = start_session(alice, "calculator")

    say(alice, session, "add 2 and 3")

    frames = events_of(alice, session)
    calls = [
        f["event"]["function_calls"][0]
        for f in frames
        if f["event"]["kind"] == "function_call"
    ]
    assert calls[0]["name"] == "calculator_add_numbers"
    assert calls[0]["args"] == {"a": 2, "b": 3}
    response = next(f for f in frames if f["event"]["kind"] == "function_response")
    assert response["event"]["function_responses"][0]["response"]["result"] == 5
    assert response["event"]["state_delta"]["session"] == {
        "last_math_operation": "addition"
    }
    state = api_for(alice).get(f"/api/sessions/{session}/state/").json()
    assert state["session"]["last_math_operation"] == "addition"


def test_user_preference_is_shared_by_my_sessions_only(
    alice, bob, demo_agents, start_session, say, api_for
):
    first = start_session(alice, "preferences")
    say(alice, first, 'set preference "theme" to "dark"')
    second = start_session(alice, "preferences")
    bobs = start_session(bob, "preferences")

    mine = api_for(alice).get(f"/api/sessions/{second}/state/").json()
    his = api_for(bob).get(f"/api/sessions/{bobs}/state/").json()

    assert mine["user"]["preferences"] == {"theme": "dark"}
    assert mine["session"] == {}
    assert "preferences" not in his["user"]


def test_message_without_wait_is_accepted_and_finishes(
    alice, demo_agents, start_session, api_for
):
    session = start_session(alice, "weather_sentiment")
    client = api_for(alice)

    response = client.post(
        f"/api/sessions/{session}/messages/",
        {"text": "weather in paris"},
        format="json",
    )

    assert response.status_code == 202
    run = response.json()
    assert run["status"] in {"queued", "running", "succeeded"}
    from agents.models import Run
    from agents.turns import start

    finished = start.wait_for_run(run=Run.objects.get(pk=run["id"]), timeout=30)
    assert finished.status == "succeeded"
    detail = client.get(f"/api/runs/{run['id']}/").json()
    assert detail["status"] == "succeeded"
    assert detail["started_at"] and detail["finished_at"]
    assert detail["duration_ms"] is not None


def test_two_messages_at_once_make_two_whole_turns(
    alice, demo_agents, start_session, api_for, events_of
):
    from agents.models import Run
    from agents.turns import start

    session = start_session(alice, "weather_sentiment")
    client = api_for(alice)
    ids = [
        client.post(
            f"/api/sessions/{session}/messages/", {"text": text}, format="json"
        ).json()["id"]
        for text in ("weather in london", "weather in paris")
    ]
    for run_id in ids:
        assert (
            start.wait_for_run(run=Run.objects.get(pk=run_id), timeout=30).status
            == "succeeded"
        )

    frames = events_of(alice, session)
    invocations = [
        f["event"]["invocation_id"] for f in frames if f["event"]["author"] != "system"
    ]
    # Each turn's events are contiguous: the invocation id changes exactly once.
    changes = sum(
        1 for a, b in zip(invocations, invocations[1:], strict=False) if a != b
    )
    assert changes == 1
    texts = [f["event"]["text"] for f in frames if f["event"]["kind"] == "user_message"]
    assert texts == ["weather in london", "weather in paris"]


def test_failed_turn_keeps_earlier_events_and_next_turn_works(
    alice, demo_agents, start_session, say, events_of, api_for, settings
):
    settings.TOOLCRIB_TOOLSETS = {
        "reactor": "tests.agents.tools.explode_reactor",
        "notes": "tests.agents.tools.note_fact",
    }
    settings.TOOLCRIB_TOOL_ERRORS_FAIL_TURN = ["plant"]  # a raising tool fails it
    staff = type(alice).objects.create_user("ops", password="pw", is_staff=True)
    created = api_for(staff).post(
        "/api/agents/",
        {
            "name": "plant",
            "description": "Runs the plant.",
            "instruction": "Use note_fact to note facts. Use explode_reactor to explode the reactor.",
            "toolsets": ["reactor", "notes"],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    session = start_session(alice, "plant")
    say(alice, session, 'note fact "the sky is blue"')
    before = events_of(alice, session)

    run = say(alice, session, 'explode the reactor for "testing"')

    assert run["status"] == "failed"
    assert "reactor exploded" in run["error"]
    after = events_of(alice, session)
    assert after[: len(before)] == before
    errors = [f["event"] for f in after if f["event"]["kind"] == "error"]
    assert "reactor exploded" in errors[0]["error"]["message"]
    assert (
        api_for(alice).get(f"/api/sessions/{session}/state/").json()["session"]["fact"]
        == "the sky is blue"
    )
    assert say(alice, session, 'note fact "still here"')["status"] == "succeeded"


def test_sync_tools_run_off_the_event_loop_and_may_use_the_orm(
    alice, make_user, demo_agents, start_session, say, events_of, api_for, settings
):
    settings.TOOLCRIB_TOOLSETS = {"census": "tests.agents.tools.count_users"}
    staff = make_user(is_staff=True)
    api_for(staff).post(
        "/api/agents/",
        {
            "name": "census",
            "instruction": "Use count_users to count users.",
            "toolsets": ["census"],
        },
        format="json",
    )
    session = start_session(alice, "census")

    assert say(alice, session, "count the users")["status"] == "succeeded"

    frames = events_of(alice, session)
    result = next(f for f in frames if f["event"]["kind"] == "function_response")
    response = result["event"]["function_responses"][0]["response"]
    assert response["users"] == 2
    assert response["thread"].startswith("adk_tool_executor")


def test_sequential_row_agent_runs_its_sub_agents_in_order(
    alice, make_user, demo_agents, start_session, say, events_of, api_for
):
    staff = make_user(is_staff=True)
    client = api_for(staff)
    for name in ("drafter", "reviewer"):
        made = client.post(
            "/api/agents/",
            {
                "name": name,
                "description": f"The {name}.",
                "instruction": f"You are the {name}.",
            },
            format="json",
        )
        assert made.status_code == 201, made.content
    pipeline = client.post(
        "/api/agents/",
        {
            "name": "pipeline",
            "kind": "sequential",
            "sub_agents": ["drafter", "reviewer"],
        },
        format="json",
    )
    assert pipeline.status_code == 201, pipeline.content
    session = start_session(alice, "pipeline")

    assert say(alice, session, "write a haiku")["status"] == "succeeded"

    authors = [
        f["event"]["author"]
        for f in events_of(alice, session)
        if f["event"]["kind"] == "text"
    ]
    assert authors == ["drafter", "reviewer"]


def test_code_agents_are_listed_with_their_kind(alice, demo_agents, api_for):
    agents = {a["name"]: a for a in api_for(alice).get("/api/agents/").json()}

    assert agents["weather_sentiment"]["kind"] == "llm"
    assert agents["editor_loop"]["kind"] == "loop"
