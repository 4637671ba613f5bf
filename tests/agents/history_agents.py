"""Code agents for tests/agents/test_history.py: a model that notes what it is sent.

HISTORY sets two of them, as a code agent's module does; `defaulted` keeps the
default.
"""

from google.adk.agents import LlmAgent
from google.adk.models import LlmRequest, LlmResponse

from agents.adk.offline import OfflineLlm, part_texts

# What each model call was sent: (role, text) per content, one list per call.
SENT: list[list[tuple[str, str]]] = []


class RecordingLlm(OfflineLlm):
    """The offline model, noting the contents of every request it answers."""

    def answer(self, llm_request: LlmRequest) -> LlmResponse:
        SENT.append(
            [
                (content.role or "", part_texts(content))
                for content in llm_request.contents
            ]
        )
        return super().answer(llm_request)


def _agent(name: str) -> LlmAgent:
    return LlmAgent(name=name, instruction="Help.", model=RecordingLlm())


windowed = _agent("windowed")
unbounded = _agent("unbounded")
defaulted = _agent("defaulted")
misjudged = _agent("misjudged")

HISTORY = {"windowed": 21, "unbounded": None, "misjudged": 0}
