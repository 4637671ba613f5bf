"""An outside client on a real Daphne server: disconnect mid-turn, reconnect, miss nothing."""

import asyncio
import json

import httpx
import pytest
import websockets

from agents.events.wire import EventFrame

TIMEOUT = 20


async def next_frame(socket) -> dict:
    frame = json.loads(await socket.recv())
    if frame.get("type") == "event":
        EventFrame.model_validate(frame)
    return frame


async def test_reconnect_after_last_seq_receives_the_rest_exactly_once(daphne_server):
    token = daphne_server.token("alice", "alice")
    headers = {"Authorization": f"Token {token}"}
    async with httpx.AsyncClient(base_url=daphne_server.url, headers=headers) as http:
        session = (
            await http.post("/api/sessions/", json={"agent": "slow_weather"})
        ).json()["id"]
        url = f"{daphne_server.ws_url}/ws/sessions/{session}/"

        seen: list[int] = []
        async with websockets.connect(
            f"{url}?after=0", additional_headers=headers
        ) as socket:
            await socket.send(
                json.dumps({"type": "message", "text": "weather in oslo"})
            )
            assert (await next_frame(socket))["type"] == "ack"
            while True:
                frame = await next_frame(socket)
                if frame.get("seq") is not None:
                    seen.append(frame["seq"])
                if (
                    frame.get("type") == "event"
                    and frame["event"]["kind"] == "function_call"
                ):
                    break  # the slow tool is running now: leave mid-turn

        async with websockets.connect(
            f"{url}?after={seen[-1]}", additional_headers=headers
        ) as socket:
            while True:
                frame = await next_frame(socket)
                if frame["seq"] is not None:
                    seen.append(frame["seq"])
                if frame["event"]["kind"] == "run_finished":
                    break

        stored = (await http.get(f"/api/sessions/{session}/events/")).json()
    assert seen == [frame["seq"] for frame in stored]
    assert seen == list(range(1, len(seen) + 1))
    kinds = [frame["event"]["kind"] for frame in stored]
    assert kinds[-3:] == ["function_response", "text", "run_finished"]


async def test_refused_without_token_with_documented_code(daphne_server):
    token = daphne_server.token("bob", "bob")
    alice = daphne_server.token("alice", "alice")
    async with httpx.AsyncClient(base_url=daphne_server.url) as http:
        created = await http.post(
            "/api/sessions/",
            json={"agent": "weather_sentiment"},
            headers={"Authorization": f"Token {alice}"},
        )
    url = f"{daphne_server.ws_url}/ws/sessions/{created.json()['id']}/"

    for extra, code in [({}, 4401), ({"Authorization": f"Token {token}"}, 4404)]:
        async with websockets.connect(url, additional_headers=extra) as socket:
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await socket.recv()
        assert closed.value.rcvd.code == code


async def test_watch_command_prints_a_sessions_events(daphne_server):
    from io import StringIO

    from agents.cli import watch

    token = daphne_server.token("alice", "alice")
    headers = {"Authorization": f"Token {token}"}
    async with httpx.AsyncClient(base_url=daphne_server.url, headers=headers) as http:
        session = (
            await http.post("/api/sessions/", json={"agent": "weather_sentiment"})
        ).json()["id"]
        await http.post(
            f"/api/sessions/{session}/messages/?wait=1",
            json={"text": "weather in london"},
        )
    out = StringIO()

    # Bounded: a run that never finishes fails the test instead of hanging the suite.
    last = await asyncio.wait_for(
        watch(
            server=daphne_server.url,
            session_id=session,
            token=token,
            out=out,
            until=lambda frame: frame.get("event", {}).get("kind") == "run_finished",
        ),
        timeout=120,
    )

    lines = out.getvalue().splitlines()
    assert last == 6
    assert lines[0].startswith("#1 run_started system")
    assert (
        lines[2]
        == '#3 function_call weather_sentiment_agent: get_weather_report({"city": "london"})'
    )
    assert lines[-1] == "#6 run_finished system: succeeded"
