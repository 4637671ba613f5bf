"""A case made from a real session's stored events, in one click.

What a turn did becomes an ADK Invocation each: the user's message, the tool calls
with their arguments and their recorded results (`intermediate_data.tool_uses` and
`tool_responses`, paired by call id), the text the agents said on the way, and the
final answer; the case's session input holds the session's state at the start of
the first turn taken. The events are read from the event log (agents.models'
Event, ADK's events as stored), and every secret-shaped value is redacted by the
one rule (agents.runtime.redact_secrets): a case is shared and exported.

ADK's own framework calls (`adk_request_credential`, `adk_request_confirmation`,
`adk_request_input`) are a pause for a person, not a tool the agent chose: they are
left out of the trajectory. The governance outcomes the turns met (a call denied,
refused by a condition, held for approval; a budget stopping a turn) become the
case's expectations (evals.outcomes).
"""

from collections.abc import Iterable, Sequence
from typing import Any

from django.utils.translation import gettext as _
from google.adk.evaluation.eval_case import IntermediateData, Invocation
from google.adk.events import Event as AdkEvent
from google.genai import types

from agents.models import Event, Run, Session
from agents.runtime import access_session, redact_secrets
from evals.cases import add_case, free_eval_id, slug
from evals.models import EvalCase, EvalSet
from evals.outcomes import expectations_met
from evals.shapes import invocation_json
from project.errors import DomainError, NotFoundError

FRAMEWORK_CALL_PREFIX = "adk_request_"
EVAL_USER = "eval_user"


class NothingToAdd(DomainError):
    code = "nothing_to_add"


def add_case_from_session(
    *,
    user,
    eval_set: EvalSet,
    session_id: str,
    run_id=None,
    seq_range: tuple[int, int] | None = None,
    eval_id: str = "",
) -> EvalCase:
    """A case of `eval_set` made from a session `user` may read: one turn (`run_id`,
    its resumed parts with it), the turns a `seq_range` touches, or every turn.

    Raises:
        NotFoundError: No such session she may read, or no such run in it.
        NothingToAdd: The turns chosen hold no user message.
    """
    session = access_session(user=user, session_id=session_id)
    rows = Event.objects.filter(session=session, is_adk=True).order_by("seq")
    if run_id is not None:
        rows = rows.filter(invocation_id__in=_invocations_of_run(session, run_id))
    elif seq_range is not None:
        touched = rows.filter(seq__gte=seq_range[0], seq__lte=seq_range[1])
        rows = rows.filter(invocation_id__in=touched.values("invocation_id"))
    picked = list(rows.values_list("seq", "data"))
    conversation = conversation_of(AdkEvent.model_validate(data) for __, data in picked)
    if not conversation:
        raise NothingToAdd(_("These turns hold no message of a person to replay."))
    state = state_before(session=session, seq=picked[0][0])
    name = eval_id or free_eval_id(eval_set, slug(session.title, fallback="session"))
    return add_case(
        eval_set=eval_set,
        eval_id=name,
        conversation=conversation,
        session_input={
            "app_name": session.app_name,
            "user_id": EVAL_USER,
            "state": state,
        },
        expectations=expectations_met(session=session, conversation=conversation),
        source_session=session,
        created_by=user,
    )


def _invocations_of_run(session: Session, run_id) -> set[str]:
    """The invocation ids of a run's turn: the run it resumes, back to the first,
    and every run resuming them (an answer resumes the same invocation)."""
    runs = {run.pk: run for run in Run.objects.filter(session=session)}
    run = runs.get(run_id)
    if run is None:
        raise NotFoundError(_("No such run in this session."))
    while run.resumes_id in runs:
        run = runs[run.resumes_id]
    chain, frontier = {run.pk}, [run.pk]
    while frontier:
        frontier = [r.pk for r in runs.values() if r.resumes_id in frontier]
        chain.update(frontier)
    return {runs[pk].invocation_id for pk in chain if runs[pk].invocation_id}


def conversation_of(events: Iterable[AdkEvent]) -> list[dict[str, Any]]:
    """ADK Invocations (as stored) of `events`, one per invocation with a user
    message, in the order they started."""
    grouped: dict[str, list[AdkEvent]] = {}
    for event in events:
        grouped.setdefault(event.invocation_id, []).append(event)
    invocations = (_invocation(key, group) for key, group in grouped.items())
    return [invocation_json(i) for i in invocations if i is not None]


def _invocation(invocation_id: str, events: Sequence[AdkEvent]) -> Invocation | None:
    user_event = next((e for e in events if _is_user_message(e)), None)
    if user_event is None:
        return None
    calls, responses, said, final = [], [], [], None
    for event in events:
        if event is user_event:
            continue
        calls += [c for c in event.get_function_calls() if _chosen(c.name)]
        responses += [r for r in event.get_function_responses() if _chosen(r.name)]
        texts = _text_parts(event)
        if event.author == "user" or not texts:
            continue
        if event.is_final_response():
            final = types.Content(role="model", parts=texts)
        else:
            said.append((event.author, texts))
    return Invocation(
        invocation_id=invocation_id,
        user_content=types.Content(role="user", parts=_text_parts(user_event)),
        final_response=final,
        intermediate_data=IntermediateData(
            tool_uses=[_redacted_call(c) for c in calls],
            tool_responses=[_redacted_response(r) for r in responses],
            intermediate_responses=said,
        ),
        creation_timestamp=user_event.timestamp,
    )


def _is_user_message(event: AdkEvent) -> bool:
    return event.author == "user" and bool(_text_parts(event))


def _text_parts(event: AdkEvent) -> list[types.Part]:
    parts = event.content.parts if event.content and event.content.parts else []
    return [types.Part(text=p.text) for p in parts if p.text and not p.thought]


def _chosen(name: str | None) -> bool:
    return bool(name) and not name.startswith(FRAMEWORK_CALL_PREFIX)


def _redacted_call(call: types.FunctionCall) -> types.FunctionCall:
    return types.FunctionCall(
        id=call.id, name=call.name, args=redact_secrets(call.args or {})
    )


def _redacted_response(response: types.FunctionResponse) -> types.FunctionResponse:
    return types.FunctionResponse(
        id=response.id,
        name=response.name,
        response=redact_secrets(response.response or {}),
    )


def state_before(*, session: Session, seq: int) -> dict[str, Any]:
    """The session's state as its turn at `seq` began: its state deltas before
    `seq` replayed over what no event ever set (the state it was created with).
    `user:` and `app:` keys appear as this session changed them; `temp:` never."""
    deltas = [
        (row_seq, (data.get("actions") or {}).get("state_delta") or {})
        for row_seq, data in Event.objects.filter(session=session, is_adk=True)
        .order_by("seq")
        .values_list("seq", "data")
    ]
    ever_set = {key for __, delta in deltas for key in delta}
    state = {k: v for k, v in session.state.items() if k not in ever_set}
    for row_seq, delta in deltas:
        if row_seq >= seq:
            break
        state.update(delta)
    kept = {k: v for k, v in state.items() if not k.startswith("temp:")}
    return redact_secrets(kept)
