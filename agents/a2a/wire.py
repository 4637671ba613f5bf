"""Toolcrib's tasks in A2A's shapes (a2a-sdk's types, protocol 0.3)."""

from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

from agents.a2a.tasks import TaskView
from agents.models import Run

STATES = {
    Run.Status.QUEUED: TaskState.submitted,
    Run.Status.RUNNING: TaskState.working,
    Run.Status.SUCCEEDED: TaskState.completed,
    Run.Status.FAILED: TaskState.failed,
    Run.Status.CANCELLED: TaskState.canceled,
}
# Where a stream ends and a blocking message/send answers: the task has ended or
# waits for a person (A2A's "interrupted" states).
SETTLED = {
    TaskState.completed,
    TaskState.failed,
    TaskState.canceled,
    TaskState.input_required,
    TaskState.auth_required,
}


def state(view: TaskView) -> TaskState:
    """The A2A state of the task's latest run."""
    run = view.run
    if run.status == Run.Status.WAITING:
        if run.waiting_for == Run.WaitingFor.CREDENTIAL:
            return TaskState.auth_required
        return TaskState.input_required
    return STATES[run.status]


def is_settled(view: TaskView) -> bool:
    return state(view) in SETTLED


def task(view: TaskView, *, history_length: int | None = None) -> Task:
    """The task as tasks/get, message/send and a stream's first event show it."""
    done = state(view) == TaskState.completed
    history = [
        _message(view, text, Role.user, f"asked-{i}")
        for i, text in enumerate(view.asked)
    ]
    if not done:
        history += [
            _message(view, text, Role.agent, f"reply-{i}")
            for i, text in enumerate(view.replies)
        ]
    if history_length is not None:
        history = history[-history_length:] if history_length > 0 else []
    return Task(
        id=view.id,
        context_id=view.context_id,
        status=_status(view),
        history=history or None,
        artifacts=[_reply(view, view.replies)] if done and view.replies else None,
        metadata=_metadata(view),
    )


def status_event(view: TaskView, *, final: bool) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id=view.id,
        context_id=view.context_id,
        status=_status(view),
        final=final,
        metadata=_metadata(view),
    )


def reply_chunk(view: TaskView, text: str, *, append: bool) -> TaskArtifactUpdateEvent:
    """One reply of the agent, added to the task's reply artifact."""
    return TaskArtifactUpdateEvent(
        task_id=view.id,
        context_id=view.context_id,
        artifact=_reply(view, [text]),
        append=append,
        last_chunk=False,
    )


def _reply(view: TaskView, texts: list[str]) -> Artifact:
    return Artifact(
        artifact_id=f"{view.id}-reply",
        name="reply",
        parts=[Part(root=TextPart(text=text)) for text in texts],
    )


def _status(view: TaskView) -> TaskStatus:
    run = view.run
    current = state(view)
    when = run.finished_at or run.started_at or run.created_at
    text = None
    if current == TaskState.failed:
        text = run.error or "The turn failed."
    elif current in (TaskState.input_required, TaskState.auth_required):
        text = "\n".join(view.waiting_on) or "Waiting for a person in Toolcrib."
    elif current == TaskState.canceled:
        text = "The task was cancelled."
    message = _message(view, text, Role.agent, f"status-{run.pk}") if text else None
    return TaskStatus(
        state=current, message=message, timestamp=when.isoformat() if when else None
    )


def _message(view: TaskView, text: str, role: Role, key: str) -> Message:
    # The same message has the same id at every read of the task.
    return Message(
        message_id=f"{view.id}-{key}",
        role=role,
        parts=[Part(root=TextPart(text=text))],
        task_id=view.id,
        context_id=view.context_id,
    )


def _metadata(view: TaskView) -> dict:
    # Where to find the task in Toolcrib: its session (the timeline) and its run.
    return {"toolcrib": {"session": view.context_id, "run": str(view.run.pk)}}
