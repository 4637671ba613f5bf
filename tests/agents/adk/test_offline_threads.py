"""The offline model under a worker's threads: one instance answers every turn,
and the words of a payload it keeps (by the object, the most recent few thousand)
are each payload's own, however many turns count them at once."""

from agents.adk import offline
from agents.adk.offline_matching import ToolSpec, choose_call
from tests.threads import at_once

PAYLOADS = 200  # each thread's, more than are kept


def test_turns_counting_payloads_at_once_get_each_payloads_own_words(monkeypatch):
    monkeypatch.setattr(offline, "PAYLOADS_KEPT", 32)  # cleared again and again
    monkeypatch.setattr(offline, "_payload_words", {})
    payloads = [
        {"text": " ".join(["word"] * n)} for n in range(PAYLOADS)
    ]  # "{'text': '...'}": n + 1 words, n > 0

    def count(index: int) -> list[int]:
        return [offline.payload_words(payload) for payload in payloads]

    counted = at_once(count)

    assert counted == [[max(n, 1) + 1 for n in range(PAYLOADS)]] * 8


def test_turns_choosing_tools_at_once_each_get_their_texts_tool():
    specs = [
        ToolSpec("get_weather", "Gets the weather in a city."),
        ToolSpec("get_time", "Gets the time in a city."),
        ToolSpec("convert_currency", "Converts an amount between currencies."),
    ]
    asks = ["what is the weather in Paris", "what time is it in Oslo"]

    def choose(index: int) -> list[str]:
        return [
            choose_call(asks[index % 2], specs, f"Use tools, turn {index} {n}.").name
            for n in range(50)
        ]

    chosen = at_once(choose)

    assert chosen == [["get_weather"] * 50, ["get_time"] * 50] * 4
