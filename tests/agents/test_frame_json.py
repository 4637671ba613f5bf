"""Every frame a client receives is valid UTF-8 JSON: a lone surrogate (in a row
stored before the input rules) shows as U+FFFD; any other frame goes out as is.
A socket's frame (frame_text, encoded once for the doorbell) says the same as the
REST API's (frame_json)."""

import json

from google.adk.events import Event as AdkEvent
from google.genai import types

from agents.events.wire import EventFrame, frame_json, frame_text, wire_from_adk


def frame_of(text: str) -> EventFrame:
    event = AdkEvent(
        author="helper",
        invocation_id="inv",
        content=types.Content(role="model", parts=[types.Part(text=text)]),
    )
    return EventFrame(seq=7, session="s", event=wire_from_adk(event))


def test_a_lone_surrogate_reads_as_the_replacement_character():
    data = frame_json(frame_of("before \ud800 after"))

    encoded = json.dumps(data, ensure_ascii=False).encode("utf-8")
    assert "before \ufffd after" in encoded.decode("utf-8")


def test_a_clean_frame_is_sent_as_pydantic_dumps_it():
    frame = frame_of("weather in Zürich: ☀️")

    data = frame_json(frame)

    assert data == frame.model_dump(mode="json", by_alias=True)
    assert "weather in Zürich: ☀️" in json.dumps(data, ensure_ascii=False)


def test_a_socket_frame_says_what_the_rest_frame_says():
    frame = frame_of("weather in Zürich: ☀️")

    assert json.loads(frame_text(frame)) == frame_json(frame)


def test_a_socket_frame_with_a_lone_surrogate_is_valid_utf8_too():
    frame = frame_of("before \ud800 after")

    text = frame_text(frame)

    assert json.loads(text.encode("utf-8")) == frame_json(frame)
    assert json.loads(text)["event"]["text"] == "before \ufffd after"


def test_a_socket_frame_too_deep_to_serialize_keeps_its_seq_without_the_payload():
    deep: dict = {}
    inner = deep
    for _ in range(300):
        inner["a"] = {}
        inner = inner["a"]
    event = AdkEvent(
        author="helper",
        invocation_id="inv",
        content=types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(name="f", args=deep))],
        ),
    )
    frame = EventFrame(seq=9, session="s", event=wire_from_adk(event))

    sent = json.loads(frame_text(frame))

    assert sent == frame_json(frame)
    assert sent["seq"] == 9
    assert sent["event"]["function_calls"] == [{"id": None, "name": "f", "args": {}}]
