"""`response_match_score`: ROUGE-1 F-measure of the final response against the
expected one, offline, by ADK's own evaluator (its vendored rouge scorer, stemmed,
Unicode-aware): the mean over the case's invocations."""

from collections.abc import Sequence

from google.adk.evaluation.final_response_match_v1 import _calculate_rouge_1_scores


def rouge_1(response: str, reference: str) -> float:
    """ROUGE-1 F-measure of one response against its reference."""
    return float(_calculate_rouge_1_scores(response, reference).fmeasure)


def response_score(actual: Sequence[str], expected: Sequence[str]) -> float | None:
    """The mean over the invocations (None for a case of none); an invocation the
    agent never reached answered nothing."""
    if not expected:
        return None
    scores = [
        rouge_1(actual[index] if index < len(actual) else "", reference)
        for index, reference in enumerate(expected)
    ]
    return sum(scores) / len(scores)
