"""`/healthz`: whether the database, the channel layer and the broker answer.

For load balancers and process supervisors: no authentication, no secrets (no
URLs, hosts or error messages, only each part's kind and the error's class).
200 when every configured part answers, 503 when one does not, never 500.
"""

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from project.celery import app as celery_app

CHECK_TIMEOUT = 3.0

Check = Callable[[], Awaitable[dict[str, Any]]]


@never_cache
@require_GET
async def healthz(request: HttpRequest) -> JsonResponse:
    """Check every part at once; 200 if all that are configured answer, else 503."""
    names = ["database", "channel_layer", "broker"]
    results = await asyncio.gather(
        _run(_check_database), _run(_check_channel_layer), _run(_check_broker)
    )
    checks = dict(zip(names, results, strict=True))
    healthy = all(check["status"] in {"ok", "off"} for check in checks.values())
    return JsonResponse(
        {"status": "ok" if healthy else "error", "checks": checks},
        status=200 if healthy else 503,
    )


async def _run(check: Check) -> dict[str, Any]:
    started = time.monotonic()
    try:
        async with asyncio.timeout(CHECK_TIMEOUT):
            result = await check()
    except TimeoutError:
        result = {"status": "error", "error": "timeout"}
    except Exception as exc:  # noqa: BLE001 - a health check reports, it never fails
        result = {"status": "error", "error": type(exc).__name__}
    result["ms"] = round((time.monotonic() - started) * 1000, 1)
    return result


async def _check_database() -> dict[str, Any]:
    vendor = await sync_to_async(_select_one)()
    return {"status": "ok", "vendor": vendor}


def _select_one() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return connection.vendor


async def _check_channel_layer() -> dict[str, Any]:
    """Send a message through the layer to a group and receive it back, as a
    socket would: its channel receives until it is done with (cancelled)."""
    layer = get_channel_layer()
    if layer is None:
        return {"status": "off"}
    channel = await layer.new_channel()
    group = f"healthz.{uuid.uuid4().hex}"
    await layer.group_add(group, channel)
    got = asyncio.get_running_loop().create_future()

    async def listen() -> None:
        try:
            got.set_result(await layer.receive(channel))
        except Exception as error:  # noqa: BLE001 - handed to the check
            got.set_exception(error)
            return
        await layer.receive(channel)

    listener = asyncio.create_task(listen())
    try:
        await layer.group_send(group, {"type": "healthz"})
        await got
    finally:
        listener.cancel()
        await asyncio.gather(listener, return_exceptions=True)
        await layer.group_discard(group, channel)
    return {"status": "ok", "backend": type(layer).__name__}


async def _check_broker() -> dict[str, Any]:
    if not settings.CELERY_BROKER_URL:
        return {"status": "off", "executor": settings.TOOLCRIB_EXECUTOR}
    transport = await asyncio.to_thread(_connect_broker)
    return {"status": "ok", "transport": transport}


def _connect_broker() -> str:
    with celery_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=0, timeout=CHECK_TIMEOUT)
        return conn.transport.driver_type
