"""Word matching for the offline model: which tool a user text asks for, and its args.

Nothing here is clever on purpose. A tool scores points for every (stemmed, non-stop)
word of the user text found in its name, its description, or an instruction sentence
that names it; the best tool above a threshold is called if its required parameters
can be filled from the text. Args are filled, by the tool's JSON schema, from
``name=value`` pairs, then quoted strings (string params, in order), then numbers
(integer/number params, in order), then the words after "in"/"for"/"about" (string
params); a lone required string param with nothing else filled takes the whole text.
"""

import functools
import re
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

TRANSFER_TOOL = "transfer_to_agent"

# Weights per place a user word is found: an instruction sentence naming the tool is
# the strongest hint, as it is for a real model ("if the user ..., use tool X").
NAME_WEIGHT = 2
DESCRIPTION_WEIGHT = 1
INSTRUCTION_WEIGHT = 3
THRESHOLD = 3

STOP_WORDS = frozenset(
    """
    a about after again all also am an and any are as at be been before being but by
    can could did do does for from get give had has have he her here him his how i if
    in into is it its just let me more most my no not now of on once only or other our
    out over please same she should so some such tell than that the their them then
    there these they this those to too under up us very was we were what whats when
    where which while who whom why will with would you your yours
    agent agents call function tool tools use used user users
    """.split()
)

_PLURAL = (("ies", "y"), ("s", ""))
_SUFFIXES = (
    "ations", "ation", "ness", "ments", "ment", "ency", "ancy", "ing", "ion",
    "ent", "ant", "ed", "er", "ly", "y", "e",
)  # fmt: skip
_MIN_STEM = 3

_WORD = re.compile(r"[a-z0-9']+")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_NAMED_PAIR = re.compile(r"(\w+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s,;]+))")
_QUOTED = re.compile(r"\"([^\"]*)\"|(?<!\w)'([^']*)'(?!\w)")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_PHRASE = re.compile(r"\b(?:in|for|about)\s+([^?.!,;:\"]+)", re.IGNORECASE)
_TRANSFER_TARGET = re.compile(r"Agent name: (.+)\nAgent description: (.*)")
_NUMERIC_TYPES = {"integer", "number"}


@dataclass(frozen=True)
class ToolSpec:
    """What the model knows about one declared tool."""

    name: str
    description: str = ""
    schema: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChosenCall:
    """A function call the offline model decided to make."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class _Candidate:
    score: int
    order: int
    spec: ToolSpec
    agent_name: str | None = None


def stem(word: str) -> str:
    """Strip a plural, then one common suffix, so "urgent" and "urgency" agree."""
    for suffix, replacement in _PLURAL:
        if word.endswith(suffix) and not word.endswith(("ss", "us", "is")):
            word = word[: len(word) - len(suffix)] + replacement
            break
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
            return word[: len(word) - len(suffix)]
    return word


def keywords(text: str) -> set[str]:
    """The stemmed content words of a text: no stop words, no numbers."""
    words = (w.replace("'", "") for w in _WORD.findall(text.replace("_", " ").lower()))
    return {stem(w) for w in words if w and w not in STOP_WORDS and not w.isdigit()}


@functools.lru_cache(maxsize=1024)
def agent_keywords(text: str) -> frozenset[str]:
    """keywords() of an agent's own text (a tool's name or description, the
    sentences of an instruction naming it): the same every model call, so worked
    out once a process. A user's text is not kept."""
    return frozenset(keywords(text))


@functools.lru_cache(maxsize=1024)
def sentences_naming(instruction: str, name: str) -> tuple[str, ...]:
    """The instruction sentences that mention a tool by its exact name."""
    pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    return tuple(s for s in _SENTENCE_BREAK.split(instruction) if pattern.search(s))


def transfer_targets(instruction: str, spec: ToolSpec) -> dict[str, str]:
    """Agent names and descriptions ADK wrote into the instruction for transfers."""
    found = dict(_TRANSFER_TARGET.findall(instruction))
    allowed = _property(spec.schema, "agent_name").get("enum")
    return {name: found.get(name, "") for name in allowed or found}


def score_tool(words: set[str], spec: ToolSpec, instruction: str) -> int:
    """Points for each user word found in the tool's name, description or instruction."""
    sentences = " ".join(sentences_naming(instruction, spec.name))
    return _score(
        words,
        (agent_keywords(spec.name), NAME_WEIGHT),
        (agent_keywords(spec.description), DESCRIPTION_WEIGHT),
        (agent_keywords(sentences), INSTRUCTION_WEIGHT),
    )


def score_agent(words: set[str], name: str, description: str) -> int:
    """Points for each user word found in a transfer target's name or description."""
    return _score(
        words,
        (agent_keywords(name), NAME_WEIGHT),
        (agent_keywords(description), DESCRIPTION_WEIGHT),
    )


def _score(words: Set[str], *places: tuple[Set[str], int]) -> int:
    return sum(weight for place, weight in places for word in words if word in place)


def choose_call(
    text: str,
    specs: Sequence[ToolSpec],
    instruction: str,
    *,
    threshold: int = THRESHOLD,
) -> ChosenCall | None:
    """The best-scoring tool whose required args the text fills, or None."""
    for candidate in _rank(text, specs, instruction):
        if candidate.score < threshold:
            return None
        if candidate.agent_name is not None:
            return ChosenCall(TRANSFER_TOOL, {"agent_name": candidate.agent_name})
        args = fill_args(candidate.spec.schema, text)
        if args is not None:
            return ChosenCall(candidate.spec.name, args)
    return None


def _rank(text: str, specs: Sequence[ToolSpec], instruction: str) -> list[_Candidate]:
    words = keywords(text)
    candidates = [
        _Candidate(score_tool(words, spec, instruction), order, spec)
        for order, spec in enumerate(specs)
        if spec.name != TRANSFER_TOOL
    ]
    # Transfers come after the agent's own tools, so its own tool wins a tie.
    for spec in specs:
        if spec.name == TRANSFER_TOOL:
            for name, description in transfer_targets(instruction, spec).items():
                score = score_agent(words, name, description)
                candidates.append(_Candidate(score, len(candidates), spec, name))
    return sorted(candidates, key=lambda c: (-c.score, c.order))


def fill_args(schema: Mapping[str, Any], text: str) -> dict[str, Any] | None:
    """Args for a tool from the text, by its JSON schema; None if a required one is missing."""
    properties: Mapping[str, Any] = schema.get("properties") or {}
    args, rest = _named_pairs(properties, text)
    quoted = [a or b for a, b in _QUOTED.findall(rest)]
    rest = _QUOTED.sub(" ", rest)
    _assign(args, properties, quoted, {"string"})
    _assign(args, properties, _NUMBER.findall(rest), _NUMERIC_TYPES)
    _assign(args, properties, _phrases(_NUMBER.sub(" ", rest)), {"string"})
    required = list(schema.get("required") or [])
    if (
        not args
        and len(required) == 1
        and _type_of(properties.get(required[0], {})) == "string"
    ):
        args[required[0]] = text.strip()
    if any(name not in args for name in required):
        return None
    return args


def _named_pairs(
    properties: Mapping[str, Any], text: str
) -> tuple[dict[str, Any], str]:
    args: dict[str, Any] = {}
    for match in _NAMED_PAIR.finditer(text):
        name = match.group(1)
        if name in properties:
            raw = next(g for g in match.groups()[1:] if g is not None)
            args[name] = convert(raw, _type_of(properties[name]))
    rest = _NAMED_PAIR.sub(lambda m: " " if m.group(1) in properties else m[0], text)
    return args, rest


def _phrases(text: str) -> list[str]:
    return [p.strip() for p in _PHRASE.findall(text) if p.strip()]


def _assign(
    args: dict[str, Any],
    properties: Mapping[str, Any],
    values: Iterable[str],
    kinds: set[str],
) -> None:
    """Give values, in order, to the still-empty params of the given types."""
    empty = [n for n, p in properties.items() if n not in args and _type_of(p) in kinds]
    for name, raw in zip(empty, values, strict=False):
        args[name] = convert(raw, _type_of(properties[name]))


def convert(raw: str, kind: str) -> Any:
    """A raw text value as the JSON schema type asks (integer, number, boolean)."""
    try:
        if kind == "integer":
            number = float(raw)
            return int(number) if number.is_integer() else number
        if kind == "number":
            return float(raw)
    except ValueError:
        return raw
    if kind == "boolean":
        return raw.lower() in {"true", "yes", "1", "on"}
    return raw


def _type_of(prop: Mapping[str, Any]) -> str:
    kind = prop.get("type")
    if kind is None and prop.get("anyOf"):
        kind = [option.get("type") for option in prop["anyOf"]]
    if isinstance(kind, list):
        kind = next((k for k in kind if k and str(k).lower() != "null"), None)
    return str(kind or "string").lower()


def _property(schema: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return (schema.get("properties") or {}).get(name) or {}


def describe_matching() -> dict[str, Any]:
    """What the offline model understands, in a user's words, from the rules above."""
    examples = ", ".join(sorted(STOP_WORDS & {"the", "please", "what", "tool"}))
    return {
        "summary": (
            "This agent runs on the offline demo model: no LLM and no network. It "
            "matches the words of your message; it does not understand sentences."
        ),
        "rules": [
            "It calls the tool whose name, description, or an instruction sentence "
            "naming it share the most words with your message: a shared word scores "
            f"{INSTRUCTION_WEIGHT} points in such a sentence, {NAME_WEIGHT} in the "
            f"tool's name and {DESCRIPTION_WEIGHT} in its description, and a tool "
            f"needs {THRESHOLD} points to be called. Common words ({examples}, ...) "
            "do not count; plurals and word endings are ignored (reports = report).",
            "It fills the tool's arguments from name=value pairs, then quoted text, "
            'then numbers, then the words after "in", "for" or "about"; a tool with '
            "one required text argument takes your whole message. A tool whose "
            "required arguments stay empty is not called.",
            "An agent that can hand over to other agents hands you to the one whose "
            "name or description shares the most words with your message.",
            "Once a tool answers, it says the result in a sentence. When nothing "
            'matches, it repeats what you said ("You said: ...").',
        ],
    }


def describe_result(name: str, response: Any) -> str:
    """A short sentence a user can read, for one tool result."""
    if not isinstance(response, Mapping):
        return f"{name} returned {response}."
    error = response.get("error_message") or response.get("error")
    if error or response.get("status") == "error":
        return f"Sorry, that did not work: {error or 'unknown error'}"
    for key in ("report", "greeting", "message"):
        if isinstance(response.get(key), str):
            return response[key]
    if "sentiment" in response:
        return f"Thanks for the feedback: it sounds {response['sentiment']} to me."
    return _describe_generic(name, response)


def _describe_generic(name: str, response: Mapping[str, Any]) -> str:
    shown = {k: v for k, v in response.items() if (k, v) != ("status", "success")}
    if set(shown) == {"result"}:
        return f"{name} returned {shown['result']}."
    if not shown:
        return f"{name} succeeded."
    details = "; ".join(f"{key}: {value}" for key, value in shown.items())
    return f"{name} returned {details}."
