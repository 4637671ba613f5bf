"""The A2A methods on Toolcrib's tasks: a2a-sdk's RequestHandler for one caller
and one agent (server.py builds one per request).

a2a-sdk parses and validates the JSON-RPC request and answers what it refuses
(-32700, -32600, -32601, -32602); this handler answers the rest with the
protocol's own errors: an unknown task, or another caller's, is -32001
TaskNotFound; an ended one -32002 TaskNotCancelable (cancel) or -32602 (a message);
a file part -32005; push notifications -32003. An unexpected error is -32603 with
no detail: never a trace or another principal's data.
"""

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager

from a2a.server.context import ServerCallContext
from a2a.server.events import Event as A2AEvent
from a2a.server.request_handlers import RequestHandler
from a2a.types import (
    ContentTypeNotSupportedError,
    DataPart,
    FilePart,
    InternalError,
    InvalidParamsError,
    Message,
    MessageSendParams,
    PushNotificationNotSupportedError,
    Task,
    TaskIdParams,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TextPart,
)
from a2a.utils.errors import ServerError
from channels.db import database_sync_to_async
from django.conf import settings
from pydantic import ValidationError

from agents.a2a import tasks, waits, wire
from agents.inputs import MessageInput
from agents.models import A2ATask, AgentSpec
from project.errors import DomainError, SessionClosed, TooManyTurns

logger = logging.getLogger(__name__)


class TaskHandler(RequestHandler):
    """message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe."""

    def __init__(self, *, spec: AgentSpec, user) -> None:
        self.spec = spec
        self.user = user

    async def on_get_task(
        self, params: TaskQueryParams, context: ServerCallContext | None = None
    ) -> Task | None:
        async with _refusals():
            view = await _aview(self._access, params.id)
        return wire.task(view, history_length=params.history_length)

    async def on_cancel_task(
        self, params: TaskIdParams, context: ServerCallContext | None = None
    ) -> Task | None:
        async with _refusals():
            task = await database_sync_to_async(tasks.cancel_task)(
                user=self.user, spec=self.spec, task_id=params.id
            )
            view = await database_sync_to_async(tasks.view_task)(task)
        return wire.task(view)

    async def on_message_send(
        self, params: MessageSendParams, context: ServerCallContext | None = None
    ) -> Task | Message:
        async with _refusals():
            task = await self._send(params)
            blocking = not (
                params.configuration and params.configuration.blocking is False
            )
            timeout = settings.TOOLCRIB_WAIT_TIMEOUT if blocking else 0
            view = await _last(task, timeout=timeout)
        history = params.configuration.history_length if params.configuration else None
        return wire.task(view, history_length=history)

    async def on_message_send_stream(
        self, params: MessageSendParams, context: ServerCallContext | None = None
    ) -> AsyncGenerator[A2AEvent]:
        async with _refusals():
            task = await self._send(params)
            async for event in _stream(task):
                yield event

    async def on_resubscribe_to_task(
        self, params: TaskIdParams, context: ServerCallContext | None = None
    ) -> AsyncGenerator[A2AEvent]:
        async with _refusals():
            task = await database_sync_to_async(tasks.access_task)(
                user=self.user, spec=self.spec, task_id=params.id
            )
            async for event in _stream(task):
                yield event

    async def on_set_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context=None
    ) -> TaskPushNotificationConfig:
        raise ServerError(error=PushNotificationNotSupportedError())

    async def on_get_task_push_notification_config(self, params, context=None):
        raise ServerError(error=PushNotificationNotSupportedError())

    async def on_list_task_push_notification_config(self, params, context=None):
        raise ServerError(error=PushNotificationNotSupportedError())

    async def on_delete_task_push_notification_config(self, params, context=None):
        raise ServerError(error=PushNotificationNotSupportedError())

    def _access(self, task_id: str) -> A2ATask:
        return tasks.access_task(user=self.user, spec=self.spec, task_id=task_id)

    async def _send(self, params: MessageSendParams) -> A2ATask:
        message = params.message
        text = message_text(message)
        return await database_sync_to_async(tasks.send_message)(
            user=self.user,
            spec=self.spec,
            text=text,
            task_id=message.task_id,
            context_id=message.context_id,
        )


def message_text(message: Message) -> str:
    """The turn's text: text parts as sent, data parts as JSON; files are refused."""
    texts = []
    for part in message.parts:
        root = part.root
        if isinstance(root, FilePart):
            raise ServerError(
                error=ContentTypeNotSupportedError(
                    message="Files are not taken over A2A: send text or data parts."
                )
            )
        if isinstance(root, TextPart):
            texts.append(root.text)
        elif isinstance(root, DataPart):
            texts.append(json.dumps(root.data, ensure_ascii=False))
    try:
        return MessageInput.model_validate({"text": "\n".join(texts)}).text
    except ValidationError as exc:
        reason = "; ".join(error["msg"] for error in exc.errors())
        raise ServerError(error=InvalidParamsError(message=reason)) from None


async def _aview(access, task_id: str) -> tasks.TaskView:
    def read() -> tasks.TaskView:
        return tasks.view_task(access(task_id))

    return await database_sync_to_async(read)()


async def _follow(
    task: A2ATask, *, timeout: float | None
) -> AsyncIterator[tasks.TaskView]:
    """The task as it changes, until it stops for the caller (ended, or waiting for
    a person) or `timeout` seconds have passed: read when its session's doorbell
    rings (waits.py), never while nothing happens."""
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    seen = None
    async with waits.doorbell(task.session_id) as bell:
        while True:
            view = await database_sync_to_async(tasks.view_task)(task)
            key = (view.run.pk, view.run.status, len(view.replies))
            if key != seen:
                seen = key
                yield view
            left = None if deadline is None else deadline - loop.time()
            if wire.is_settled(view) or (left is not None and left <= 0):
                return
            await bell.wait(left)


async def _last(task: A2ATask, *, timeout: float) -> tasks.TaskView:
    """The task once it has settled, or as it is when `timeout` seconds passed."""
    views = [view async for view in _follow(task, timeout=timeout)]
    return views[-1]


async def _stream(task: A2ATask) -> AsyncIterator[A2AEvent]:
    """The task first, then each change: a status, each new reply as an artifact
    chunk; the last event is the final status."""
    sent_replies = 0
    first = True
    async for view in _follow(task, timeout=None):
        if first:
            first = False
            sent_replies = len(view.replies)
            yield wire.task(view)
            if wire.is_settled(view):
                yield wire.status_event(view, final=True)
                return
            continue
        for text in view.replies[sent_replies:]:
            yield wire.reply_chunk(view, text, append=sent_replies > 0)
            sent_replies += 1
        settled = wire.is_settled(view)
        yield wire.status_event(view, final=settled)


@asynccontextmanager
async def _refusals() -> AsyncIterator[None]:
    """Toolcrib's refusals as the protocol's errors."""
    try:
        yield
    except ServerError:
        raise
    except tasks.TaskUnknown:
        raise ServerError(error=TaskNotFoundError()) from None
    except tasks.ContextUnknown as exc:
        raise ServerError(error=InvalidParamsError(message=str(exc))) from None
    except tasks.TaskEnded as exc:
        raise ServerError(error=TaskNotCancelableError(message=str(exc))) from None
    except (SessionClosed, TooManyTurns) as exc:
        raise ServerError(error=InvalidParamsError(message=str(exc))) from None
    except DomainError as exc:
        raise ServerError(error=InvalidParamsError(message=str(exc))) from None
    except Exception:
        logger.exception("a2a request failed")
        raise ServerError(error=InternalError()) from None
