"""A2A tasks as Toolcrib sessions and runs: start, continue, read, cancel.

A task is a turn of its caller's, started by agents.turns.start like any other:
governance, approvals, budgets and the audit apply as to a message sent from a
page. Its `contextId` is its session's id; its id is an A2ATask row's, which names
the task's latest Run. Its state is read from that run, following the runs a
person's answer started (`Run.resumes`), so a task waiting for an approval goes
on, and ends completed, once the approver answers in Toolcrib's inbox: nothing of
a task lives in a process's memory.

Every read is scoped to the caller and the agent: another principal's task or
context is "unknown", as one that never existed (staff included).
"""

import json
from dataclasses import dataclass, field
from uuid import UUID

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agents.events.log import record_and_publish
from agents.events.wire import run_out
from agents.models import A2ATask, AgentSpec, Event, Request, Run, Session
from agents.requests import wording
from agents.requests.closing import expire_stopped
from agents.sessions import create_session
from agents.turns import cancel, start
from project.errors import DomainError, NotFoundError


class TaskUnknown(NotFoundError):
    """No such task of this caller and agent."""

    def __init__(self) -> None:
        super().__init__("No such task.")


class ContextUnknown(NotFoundError):
    """The contextId names no session of this caller with this agent."""

    def __init__(self) -> None:
        super().__init__("No such context: omit contextId to start a new one.")


class TaskEnded(DomainError):
    """The task has ended: it takes no more messages, and cannot be cancelled."""

    status_code = 409
    code = "task_ended"

    def __init__(self, state: str) -> None:
        super().__init__(f"The task has ended ({state}).")


class TaskBusy(DomainError):
    """A message named a task: it takes none (a new task in its context does)."""

    code = "task_busy"

    def __init__(self, status: str) -> None:
        why = {
            Run.Status.WAITING: "it waits for a person's answer in Toolcrib's inbox",
            Run.Status.QUEUED: "it is still working",
            Run.Status.RUNNING: "it is still working",
        }.get(status, "it has ended")
        super().__init__(
            f"This task takes no more messages: {why}. Send the message with its "
            "contextId and no taskId: it starts the next task of the conversation."
        )


@dataclass(frozen=True)
class TaskView:
    """What a caller reads of a task: ids, its latest run, and what it said."""

    id: str
    context_id: str
    run: Run
    asked: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    waiting_on: list[str] = field(default_factory=list)


def send_message(
    *,
    user,
    spec: AgentSpec,
    text: str,
    task_id: str | None = None,
    context_id: str | None = None,
) -> A2ATask:
    """Start a new task: a turn in a new session, or in the caller's `context_id`.

    Raises:
        TaskUnknown, ContextUnknown: Not the caller's (or no such one).
        TaskBusy: The message named a task of the caller's.
        SessionClosed, TooManyTurns: As for any message (agents.turns.start).
    """
    if task_id:
        # A task is one turn and the turns its answers resume: a person answers
        # a pause in Toolcrib's inbox, and the conversation goes on as a new
        # task in the same context.
        task = access_task(user=user, spec=spec, task_id=task_id)
        raise TaskBusy(latest_run(task.run).status)
    session = _session(user=user, spec=spec, context_id=context_id)
    run = start.start_turn(session=session, user=user, text=text)
    return A2ATask.objects.create(session=session, user=user, run=run)


def _session(*, user, spec: AgentSpec, context_id: str | None) -> Session:
    if not context_id:
        return create_session(user=user, agent=spec)
    session = Session.objects.filter(pk=context_id, owner=user, agent=spec).first()
    if session is None:
        raise ContextUnknown()
    return session


def access_task(*, user, spec: AgentSpec, task_id: str) -> A2ATask:
    """The caller's task with this agent, or TaskUnknown: never anyone else's."""
    try:
        key = UUID(str(task_id))
    except ValueError:
        raise TaskUnknown() from None
    task = (
        A2ATask.objects.select_related("session", "run")
        .filter(pk=key, user=user, session__agent=spec)
        .first()
    )
    if task is None:
        raise TaskUnknown()
    return task


def latest_run(run: Run) -> Run:
    """The run an answer last resumed `run` in (`run` if none has)."""
    while True:
        later = Run.objects.filter(resumes=run).order_by("-created_at").first()
        if later is None:
            return run
        run = later


def view_task(task: A2ATask) -> TaskView:
    """The task as its caller reads it, from its runs and its session's events,
    read afresh."""
    runs = [Run.objects.get(pk=task.run_id)]
    while (later := Run.objects.filter(resumes=runs[-1]).first()) is not None:
        runs.append(later)
    invocations = {run.invocation_id for run in runs if run.invocation_id}
    return TaskView(
        id=str(task.pk),
        context_id=task.session_id,
        run=runs[-1],
        asked=[runs[0].text] if runs[0].text else [],
        replies=_replies(session_id=task.session_id, invocations=invocations),
        waiting_on=_waiting_on(runs[-1]),
    )


def _replies(*, session_id: str, invocations: set[str]) -> list[str]:
    """What the agent said: its texts, and a workflow's output (a Workflow's root
    output is its answer, written as no text: JSON unless it is a string)."""
    if not invocations:
        return []
    rows = Event.objects.filter(
        Q(kind="text") | Q(data__has_key="output"),
        session_id=session_id,
        invocation_id__in=invocations,
        is_adk=True,
    ).order_by("seq")
    return [text for row in rows if (text := _text(row.data) or _output(row.data))]


def _text(data: dict) -> str:
    if data.get("partial"):
        return ""
    parts = (data.get("content") or {}).get("parts") or []
    return "".join(
        part["text"]
        for part in parts
        if isinstance(part, dict) and part.get("text") and not part.get("thought")
    )


def _output(data: dict) -> str:
    """The root workflow's output an event carries, as text; "" for any other."""
    info = data.get("node_info") or {}
    roots = [path for path in info.get("output_for") or [] if "/" not in path]
    output = data.get("output")
    if not roots or output is None or data.get("partial"):
        return ""
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def _waiting_on(run: Run) -> list[str]:
    if run.status != Run.Status.WAITING:
        return []
    pending = Request.objects.filter(run=run, status=Request.Status.PENDING)
    return [_wording(request) for request in pending.order_by("created_at")]


def _wording(request: Request) -> str:
    """The request as the inbox shows it (agents.requests.wording): what it asks,
    the question a workflow asks, who answers."""
    who = f"the group {request.answer_group}" if request.answer_group else "its owner"
    asked = f" ({request.description})" if request.description else ""
    what = wording.title(request)
    what = what[:1].lower() + what[1:]
    return (
        f"Waiting for a person: {what}{asked}, request "
        f"{request.pk}, is answered by {who} in Toolcrib's inbox; the task goes on "
        "once it is."
    )


def cancel_task(*, user, spec: AgentSpec, task_id: str) -> A2ATask:
    """Stop the task's turn, queued, running or waiting for a person.

    Raises:
        TaskUnknown: Not the caller's task.
        TaskEnded: It has already ended (completed, failed or cancelled).
    """
    task = access_task(user=user, spec=spec, task_id=task_id)
    run = latest_run(task.run)
    if run.status == Run.Status.WAITING:
        _cancel_waiting(run)
        return task
    try:
        cancel.cancel_session_run(user=user, session=task.session, run_id=run.pk)
    except cancel.RunEnded as exc:
        raise TaskEnded(run.status) from exc
    return task


def _cancel_waiting(run: Run) -> None:
    """End a waiting run cancelled; its pending requests expire (no one answers)."""
    with transaction.atomic():
        ended = Run.objects.filter(pk=run.pk, status=Run.Status.WAITING).update(
            status=Run.Status.CANCELLED, finished_at=timezone.now(), waiting_for=""
        )
        if not ended:
            run.refresh_from_db(fields=["status"])
            raise TaskEnded(run.status)
        expire_stopped(run=run)
    run.refresh_from_db()
    record_and_publish(
        session=run.session,
        kind="run_finished",
        invocation_id=run.invocation_id,
        data={"run": run_out(run)},
    )
