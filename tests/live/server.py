"""Real server processes for end-to-end tests: Daphne (and later Celery) as subprocesses.

pytest-django's live_server is WSGI only; these tests need websockets, so they start
the real ASGI server on a free port, with its own migrated database and demo data.
"""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
START_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(extra: Mapping[str, str]) -> dict[str, str]:
    env = {**os.environ, "SECRET_KEY": "live-test-secret", "TOOLCRIB_FAST_HASHER": "1"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.update(extra)
    return env


def prepare_database(env: Mapping[str, str]) -> None:
    """Migrate and create the demo users and agents, in the server's own database."""
    for command in (["migrate", "--noinput"], ["demo_setup"]):
        subprocess.run(
            [sys.executable, "manage.py", *command],
            cwd=ROOT,
            env=dict(env),
            check=True,
            capture_output=True,
        )


@dataclass
class LiveServer:
    url: str
    process: subprocess.Popen

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://")

    def token(self, username: str, password: str) -> str:
        response = httpx.post(
            f"{self.url}/api/auth/token/",
            json={"username": username, "password": password},
        )
        response.raise_for_status()
        return response.json()["token"]


def wait_for_port(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"server did not listen on {port} within {START_TIMEOUT}s")


@contextmanager
def daphne(env: Mapping[str, str], log: Path) -> Iterator[LiveServer]:
    """A Daphne process serving the app until the block ends."""
    port = free_port()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(BIN / "daphne"),
                "-b",
                "127.0.0.1",
                "-p",
                str(port),
                "project.asgi:application",
            ],
            cwd=ROOT,
            env=dict(env),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for_port(port, process)
            yield LiveServer(url=f"http://127.0.0.1:{port}", process=process)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
