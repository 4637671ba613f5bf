"""A Daphne server the browser tests can stop and start again on the same port."""

import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path

import httpx

from tests.live.server import BIN, ROOT, free_port, wait_for_port


class RestartableServer:
    """Daphne on a fixed port: stopping it drops every websocket for real."""

    def __init__(self, *, env: Mapping[str, str], log: Path) -> None:
        self.env = dict(env)
        self.log = log
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.starts += 1
        out = (self.log / f"daphne-{self.starts}.log").open("wb")
        self.process = subprocess.Popen(
            [
                str(BIN / "daphne"),
                "-b",
                "127.0.0.1",
                "-p",
                str(self.port),
                "project.asgi:application",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        out.close()
        wait_for_port(self.port, self.process)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def freeze(self) -> None:
        """Stop the process (SIGSTOP): it keeps its sockets and answers nothing."""
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """Let a frozen process run again (SIGCONT); harmless on a running one."""
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)

    def token(self, username: str, password: str) -> str:
        response = httpx.post(
            f"{self.url}/api/auth/token/",
            json={"username": username, "password": password},
        )
        response.raise_for_status()
        return response.json()["token"]
