"""The machine's services, as the integration suite uses them: each run on its own.

Every run gets a PostgreSQL database of its own (created, then dropped), a Redis
key prefix of its own (its keys deleted at the end), a Celery queue of its own,
and, for the test that restarts Redis, a redis-server of its own on a free port:
the machine's Redis on 6379 is never restarted.
"""

import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
import redis
from kombu import Connection

from tests.live.server import free_port

POSTGRES_URL = os.environ.get(
    "TOOLCRIB_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("TOOLCRIB_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
AMQP_URL = os.environ.get(
    "TOOLCRIB_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//"
)
REQUIRED = os.environ.get("TOOLCRIB_REQUIRE_SERVICES") == "1"
CONNECT_TIMEOUT = 3


def run_name() -> str:
    """A name no other run on this machine uses: pid plus random."""
    return f"toolcrib_it_{os.getpid()}_{uuid.uuid4().hex[:8]}"


def unavailable(service: str, error: Exception) -> None:
    """Skip (locally) or fail (CI) because a service does not answer."""
    message = f"{service} is not reachable ({type(error).__name__}: {error})"
    if REQUIRED:
        pytest.fail(
            f"{message}; TOOLCRIB_REQUIRE_SERVICES=1 makes that an error",
            pytrace=False,
        )
    pytest.skip(f"{message}; set TOOLCRIB_TEST_* URLs or start it")


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@contextmanager
def postgres_database(name: str) -> Iterator[str]:
    """A fresh PostgreSQL database for this run; its URL. Dropped at the end."""
    try:
        admin = psycopg.connect(
            POSTGRES_URL, autocommit=True, connect_timeout=CONNECT_TIMEOUT
        )
    except psycopg.OperationalError as error:
        unavailable(f"PostgreSQL at {POSTGRES_URL}", error)
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield _with_database(POSTGRES_URL, name)
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def redis_prefix(prefix: str) -> Iterator[str]:
    """The machine's Redis, for keys under `prefix`; its URL. Those keys go at the end."""
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=CONNECT_TIMEOUT)
    try:
        client.ping()
    except redis.RedisError as error:
        unavailable(f"Redis at {REDIS_URL}", error)
    try:
        yield REDIS_URL
    finally:
        keys = list(client.scan_iter(match=f"{prefix}*", count=500))
        if keys:
            client.delete(*keys)
        client.close()


def require_amqp() -> str:
    """RabbitMQ's URL, or a skip: the issue's CI needs PostgreSQL and Redis only."""
    try:
        with Connection(AMQP_URL, connect_timeout=CONNECT_TIMEOUT) as conn:
            conn.ensure_connection(max_retries=0, timeout=CONNECT_TIMEOUT)
    except Exception as error:  # noqa: BLE001 - any failure means "not here"
        pytest.skip(f"RabbitMQ at {AMQP_URL} is not reachable ({error})")
    return AMQP_URL


def delete_amqp_queue(name: str) -> None:
    """Remove a run's queue (and the exchange Celery made for it) from RabbitMQ."""
    with Connection(AMQP_URL, connect_timeout=CONNECT_TIMEOUT) as conn:
        channel = conn.default_channel
        channel.queue_delete(name)
        channel.exchange_delete(name)


@dataclass
class RedisServer:
    """A redis-server of this test's own, with no persistence: a restart forgets all."""

    port: int
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def restart(self) -> None:
        self.stop()
        self.start()


@contextmanager
def redis_server() -> Iterator[RedisServer]:
    """A redis-server on a free port until the block ends."""
    server = RedisServer(port=free_port())
    try:
        server.start()
    except FileNotFoundError as error:
        unavailable("redis-server (to start one of this test's own)", error)
    try:
        yield server
    finally:
        server.stop()


def start_together(stack: ExitStack, *managers: AbstractContextManager) -> list:
    """Enter context managers at once (processes start in parallel); exit with `stack`."""
    with ThreadPoolExecutor(len(managers)) as pool:
        futures = [pool.submit(manager.__enter__) for manager in managers]
    errors = []
    for manager, future in zip(managers, futures, strict=True):
        if future.exception() is None:
            stack.push(manager.__exit__)
        else:
            errors.append(future.exception())
    if errors:
        raise errors[0]
    return [future.result() for future in futures]
