"""Every frame a client receives is valid UTF-8 JSON: a lone surrogate (in a row
stored before the input rules) shows as U+FFFD; any other frame goes out as is."""

import json

from google.adk.events import Event as AdkEvent
from google.genai import types

from agents.events.wire import EventFrame, frame_json, wire_from_adk


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
