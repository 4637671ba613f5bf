"""OfflineLlm: a deterministic ADK model for demos and tests that never touches the network.

Importing this module registers it for model names matching ``offline/.*``, so
``LlmAgent(model="offline/demo")`` works. One instance serves every session: each answer
is derived from the LlmRequest alone.

Without a script it improvises: tool results are put into words, otherwise the user's
words pick a tool (see ``offline_matching``), otherwise it echoes what it understood.
With a ``script`` it plays the scripted steps in order.
"""

from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from typing import Any, Self

from google.adk.models import (
    BaseLlm,
    LlmCapabilities,
    LLMRegistry,
    LlmRequest,
    LlmResponse,
)
from google.genai import types
from pydantic import BaseModel, Field, model_validator

from agents.adk.offline_matching import (
    ChosenCall,
    ToolSpec,
    choose_call,
    describe_result,
)

AGENT_NAME_LABEL = "adk_agent_name"
WORDS_PER_CHUNK = 3
# User-role texts that ADK writes, not the user: other agents' turns relayed as
# context, and dynamic instructions moved into the contents.
_NOT_FROM_USER = ("For context:", "<<<BEGIN_SYSTEM_INSTRUCTION>>>")


class OfflineCall(BaseModel):
    """One function call in a scripted step."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class OfflineStep(BaseModel):
    """One scripted model answer: text, function calls, or an error."""

    text: str | None = None
    function_calls: list[OfflineCall] = Field(default_factory=list)
    error_code: str | None = None
    error_message: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        kinds = [
            self.text is not None,
            bool(self.function_calls),
            bool(self.error_code),
        ]
        if sum(kinds) != 1:
            raise ValueError("a step is exactly one of text, function calls, error")
        return self

    @classmethod
    def say(cls, text: str) -> "OfflineStep":
        """A step that answers with this exact text."""
        return cls(text=text)

    @classmethod
    def call(cls, name: str, /, **args: Any) -> "OfflineStep":
        """A step that calls one tool with these args."""
        return cls(function_calls=[OfflineCall(name=name, args=args)])

    @classmethod
    def calls(
        cls, calls: Iterable[OfflineCall | tuple[str, Mapping[str, Any]]]
    ) -> "OfflineStep":
        """A step that calls several tools in parallel."""
        return cls(function_calls=[_as_call(call) for call in calls])

    @classmethod
    def fail(cls, code: str, message: str) -> "OfflineStep":
        """A step where the model returns an error instead of content."""
        return cls(error_code=code, error_message=message)


def _as_call(call: OfflineCall | tuple[str, Mapping[str, Any]]) -> OfflineCall:
    if isinstance(call, OfflineCall):
        return call
    name, args = call
    return OfflineCall(name=name, args=dict(args))


class OfflineLlm(BaseLlm):
    """A deterministic model: no network, no state of its own."""

    model: str = "offline/demo"
    script: list[OfflineStep] | None = None

    @classmethod
    def supported_models(cls) -> list[str]:
        """Model names this class answers to in ADK's registry."""
        return [r"offline/.*"]

    @property
    def capabilities(self) -> LlmCapabilities:
        """Declared outright, so ADK never guesses from the model name."""
        return LlmCapabilities(output_schema_and_tools=False)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """One answer; with stream=True, text arrives in partial chunks first."""
        prompt_words = count_request_words(llm_request)
        response = self.answer(llm_request)
        response.usage_metadata = usage(prompt_words, count_words(response.content))
        if stream:
            for chunk in partial_chunks(response, prompt_words):
                yield chunk
        yield response

    def answer(self, llm_request: LlmRequest) -> LlmResponse:
        """The final (non-partial) response to a request."""
        agent = agent_name(llm_request)
        if self.script is not None:
            return play_script(self.script, llm_request, agent)
        return improvise(llm_request, agent)


def play_script(
    script: Sequence[OfflineStep], llm_request: LlmRequest, agent: str
) -> LlmResponse:
    """The scripted step this request is at, counted from the last user text."""
    index = step_index(llm_request.contents)
    if index >= len(script):
        return text_response("(script finished)")
    step = script[index]
    if step.error_code:
        return LlmResponse(error_code=step.error_code, error_message=step.error_message)
    if step.function_calls:
        return calls_response(
            ChosenCall(c.name, dict(c.args)) for c in step.function_calls
        )
    return text_response(step.text or "")


def improvise(llm_request: LlmRequest, agent: str) -> LlmResponse:
    """Summarize tool results, call a matching tool, or echo the user."""
    contents = llm_request.contents
    results = trailing_function_responses(contents)
    if results:
        summary = " ".join(
            describe_result(r.name or "tool", r.response) for r in results
        )
        return text_response(summary)
    text = latest_user_text(contents)
    ends_with_model = bool(contents) and contents[-1].role == "model"
    call = None if ends_with_model or not text else pick_call(llm_request, text)
    if call is not None:
        return calls_response([call])
    reply = f"You said: {text}" if text else "How can I help?"
    return text_response(reply)


def pick_call(llm_request: LlmRequest, text: str) -> ChosenCall | None:
    """The tool call the text asks for, honouring a forced or disabled tool_config."""
    specs = declared_tools(llm_request)
    mode, allowed = calling_mode(llm_request.config)
    if mode == "NONE" or not specs:
        return None
    instruction = system_instruction_text(llm_request.config)
    if mode != "ANY":
        return choose_call(text, specs, instruction)
    forced = [s for s in specs if not allowed or s.name in allowed]
    return choose_call(text, forced, instruction, threshold=0)


def declared_tools(llm_request: LlmRequest) -> list[ToolSpec]:
    """Declared function tools that ADK can also run (present in tools_dict)."""
    runnable = llm_request.tools_dict
    return [
        ToolSpec(decl.name, decl.description or "", parameters_schema(decl))
        for tool in llm_request.config.tools or []
        for decl in getattr(tool, "function_declarations", None) or []
        if decl.name and (not runnable or decl.name in runnable)
    ]


def parameters_schema(decl: types.FunctionDeclaration) -> dict[str, Any]:
    """The JSON schema of a declaration's parameters, from either field."""
    if decl.parameters_json_schema:
        return dict(decl.parameters_json_schema)
    if decl.parameters:
        return decl.parameters.model_dump(mode="json", exclude_none=True)
    return {}


def calling_mode(config: types.GenerateContentConfig) -> tuple[str, list[str]]:
    """The function-calling mode (AUTO, ANY, NONE) and its allowed names."""
    calling = config.tool_config and config.tool_config.function_calling_config
    if not calling or not calling.mode:
        return "AUTO", []
    mode = getattr(calling.mode, "value", calling.mode)
    return str(mode).upper(), list(calling.allowed_function_names or [])


def agent_name(llm_request: LlmRequest) -> str:
    """The name of the agent calling the model, as ADK labels the request."""
    return (llm_request.config.labels or {}).get(AGENT_NAME_LABEL, "offline")


def system_instruction_text(config: types.GenerateContentConfig) -> str:
    """The system instruction as one string, whatever shape it came in."""
    instruction = config.system_instruction
    if instruction is None:
        return ""
    if isinstance(instruction, str):
        return instruction
    if isinstance(instruction, types.Content):
        return part_texts(instruction)
    if isinstance(instruction, types.Part):
        return instruction.text or ""
    return "\n".join(
        item if isinstance(item, str) else item.text or "" for item in instruction
    )


def part_texts(content: types.Content) -> str:
    """The visible text parts of a content, joined."""
    return "".join(p.text for p in content.parts or [] if p.text and not p.thought)


def is_user_text(content: types.Content) -> bool:
    """True for a message the user typed (not a tool result or relayed context)."""
    if content.role != "user" or not content.parts:
        return False
    if any(p.function_response for p in content.parts):
        return False
    text = part_texts(content)
    return bool(text) and not text.startswith(_NOT_FROM_USER)


def latest_user_text(contents: Sequence[types.Content]) -> str:
    """The last message the user typed, or an empty string."""
    for content in reversed(contents):
        if is_user_text(content):
            return part_texts(content).strip()
    return ""


def step_index(contents: Sequence[types.Content]) -> int:
    """How many model turns came after the last user text: the script step to play."""
    steps = 0
    for content in reversed(contents):  # back to the last user text: this turn's
        if content.role == "model":
            steps += 1
        elif is_user_text(content):
            break
    return steps


def trailing_function_responses(
    contents: Sequence[types.Content],
) -> list[types.FunctionResponse]:
    """The tool results the contents end with, oldest first; empty if they end otherwise."""
    results: list[types.FunctionResponse] = []
    for content in reversed(contents):
        found = [
            p.function_response for p in content.parts or [] if p.function_response
        ]
        if not found:
            break
        results[:0] = found
    return results


def text_response(text: str) -> LlmResponse:
    """A final model turn holding this text."""
    content = types.Content(role="model", parts=[types.Part(text=text)])
    return LlmResponse(content=content, finish_reason=types.FinishReason.STOP)


def calls_response(calls: Iterable[ChosenCall]) -> LlmResponse:
    """A final model turn calling these tools; ADK fills in the call ids."""
    parts = [
        types.Part(function_call=types.FunctionCall(name=call.name, args=call.args))
        for call in calls
    ]
    content = types.Content(role="model", parts=parts)
    return LlmResponse(content=content, finish_reason=types.FinishReason.STOP)


def partial_chunks(response: LlmResponse, prompt_words: int) -> list[LlmResponse]:
    """The text of a text-only response as partial chunks of a few words each."""
    parts = (response.content.parts if response.content else None) or []
    if len(parts) != 1 or not parts[0].text:
        return []
    chunks, seen = [], 0
    for piece in word_groups(parts[0].text):
        seen += len(piece.split())
        content = types.Content(role="model", parts=[types.Part(text=piece)])
        chunk = LlmResponse(content=content, partial=True)
        chunk.usage_metadata = usage(prompt_words, seen)  # cumulative, as Gemini's
        chunks.append(chunk)
    return chunks


def word_groups(text: str) -> list[str]:
    """The text cut every few words; the pieces join back to exactly the text."""
    words = text.split(" ")
    groups = [
        words[i : i + WORDS_PER_CHUNK] for i in range(0, len(words), WORDS_PER_CHUNK)
    ]
    pieces = [" ".join(group) + " " for group in groups]
    pieces[-1] = pieces[-1][:-1]
    return pieces


def usage(
    prompt_words: int, answer_words: int
) -> types.GenerateContentResponseUsageMetadata:
    """Token counts, roughly: one token per word."""
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt_words,
        candidates_token_count=answer_words,
        total_token_count=prompt_words + answer_words,
    )


def count_request_words(llm_request: LlmRequest) -> int:
    """Words in the instruction and every content of a request."""
    instruction = len(system_instruction_text(llm_request.config).split())
    return instruction + sum(count_words(c) for c in llm_request.contents)


def count_words(content: types.Content | None) -> int:
    """Words in a content's text, function calls and function responses."""
    if content is None:
        return 0
    total = 0
    for part in content.parts or []:
        if part.text:
            total += len(part.text.split())
        if part.function_call:
            total += 1 + payload_words(part.function_call.args)
        if part.function_response:
            total += 1 + payload_words(part.function_response.response)
    return total


# Words of a call's arguments or a result, by the object: every model step's request
# holds the session's calls and results again, and ADK's copies of its contents are
# shallow (the payloads are the session events' own, never changed in place), so
# each is put into words once while it is among the last PAYLOADS_KEPT counted.
PAYLOADS_KEPT = 4096
_payload_words: dict[int, tuple[Any, int]] = {}


def payload_words(payload: Mapping[str, Any] | None) -> int:
    """Words in a call's arguments or a function's result, as text."""
    if not payload:
        return 1  # "{}"
    kept = _payload_words.get(id(payload))
    if kept is not None and kept[0] is payload:
        return kept[1]
    words = len(str(payload).split())
    if len(_payload_words) >= PAYLOADS_KEPT:
        _payload_words.clear()
    _payload_words[id(payload)] = (payload, words)
    return words


LLMRegistry.register(OfflineLlm)
