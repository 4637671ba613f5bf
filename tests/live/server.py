"""Real server processes for end-to-end tests: Daphne and Celery workers as subprocesses.

pytest-django's live_server is WSGI only; these tests need websockets, so they start
the real ASGI server on a free port, with its own migrated database and demo data,
and (for the integration suite) Celery workers on the same database and broker.
"""

import atexit
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# Generous: a busy 2-core machine takes a while to import Django and ADK.
START_TIMEOUT = 90.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(extra: Mapping[str, str]) -> dict[str, str]:
    # TOOLCRIB_DEMO: prepare_database runs demo_setup, and the tests and bench/ use
    # the demo agents and users.
    env = {
        **os.environ,
        "SECRET_KEY": "live-test-secret",
        "TOOLCRIB_FAST_HASHER": "1",
        "TOOLCRIB_DEMO": "1",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    # The test process sweeps no runs (pyproject.toml); a server does, as deployed.
    env.pop("TOOLCRIB_SWEEP_SECONDS", None)
    env.update(extra)
    return env


# Prepared SQLite databases, by the environment that made them: a second server
# with the same settings gets a copy of the file instead of migrating again (about
# 12 s a time on 2 busy cores, once per test module that starts a server).
_TEMPLATES: dict[str, Path] = {}
# Variables that say where a database goes, or which test is running: not what is in it.
_PLACE = ("DATABASE_URL", "TOOLCRIB_DATA_DIR", "PYTEST_CURRENT_TEST")
_FOLDER: list[Path] = []  # made on first use, removed when the process ends


def prepare_database(env: Mapping[str, str]) -> None:
    """Migrate and create the demo users and agents, in the server's own database.

    A SQLite file database is copied from one prepared earlier in this process with
    the same environment, when there is one: the same migrations and demo_setup
    would make the same rows.
    """
    target = _sqlite_file(env.get("DATABASE_URL", ""))
    if target is None:
        _migrate_and_set_up(env)
        return
    key = hashlib.sha256(
        repr(sorted((k, v) for k, v in env.items() if k not in _PLACE)).encode()
    ).hexdigest()
    if key not in _TEMPLATES:
        _migrate_and_set_up(env)
        _TEMPLATES[key] = _keep(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _copy_database(_TEMPLATES[key], target)


def _sqlite_file(url: str) -> Path | None:
    prefix = "sqlite:///"
    if not url.startswith(prefix) or ":memory:" in url or "?" in url:
        return None
    return Path(url.removeprefix(prefix))


def _keep(database: Path) -> Path:
    """A copy of a prepared database, in this process's own folder of them."""
    if not _FOLDER:
        _FOLDER.append(Path(tempfile.mkdtemp(prefix="toolcrib-db-templates-")))
        atexit.register(shutil.rmtree, _FOLDER[0], ignore_errors=True)
    copy = _FOLDER[0] / f"{len(_TEMPLATES)}.sqlite3"
    _copy_database(database, copy)
    return copy


def _copy_database(source: Path, target: Path) -> None:
    """A SQLite file and its write-ahead log, if one was left beside it."""
    shutil.copyfile(source, target)
    log = source.with_name(source.name + "-wal")
    if log.exists():
        shutil.copyfile(log, target.with_name(target.name + "-wal"))


def _migrate_and_set_up(env: Mapping[str, str]) -> None:
    # One process for both: Django and ADK take seconds to import.
    script = (
        "from django.core.management import call_command; "
        "call_command('migrate', interactive=False, verbosity=0); "
        "call_command('demo_setup', verbosity=0)"
    )
    subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", script],
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
            stop(process)


@dataclass
class Worker:
    process: subprocess.Popen
    log: Path

    def kill(self) -> None:
        """SIGKILL, as a machine that dies: nothing is acknowledged or cleaned up."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def wait_for_log(
    log: Path, marker: str, process: subprocess.Popen, *, offset: int = 0
) -> None:
    """Wait until the log, from byte `offset` on, contains `marker`."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if marker.encode() in log.read_bytes()[offset:]:
            return
        if process.poll() is not None:
            raise RuntimeError(f"worker exited with {process.returncode}: see {log}")
        time.sleep(0.1)
    raise RuntimeError(f"worker did not log {marker!r} within {START_TIMEOUT}s")


@contextmanager
def celery_worker(
    env: Mapping[str, str], log: Path, *, pool: str = "solo", concurrency: int = 1
) -> Iterator[Worker]:
    """A Celery worker process until the block ends, started once it logs `ready.`."""
    command = [
        str(BIN / "celery"),
        "-A",
        "project",
        "worker",
        f"--pool={pool}",
        f"--concurrency={concurrency}",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        "--loglevel=INFO",
        f"--hostname=test-{uuid.uuid4().hex[:8]}@%h",
    ]
    offset = log.stat().st_size if log.exists() else 0
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=dict(env), stdout=out, stderr=subprocess.STDOUT
        )
        try:
            wait_for_log(log, "ready.", process, offset=offset)
            yield Worker(process=process, log=log)
        finally:
            # An idle worker on RabbitMQ takes ~10 s to stop; nothing is lost by less.
            stop(process, timeout=3)


def stop(process: subprocess.Popen, timeout: float = 10) -> None:
    """SIGTERM, then SIGKILL if the process is still there after `timeout` seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
