"""Watching processes a test started, or had started, by their pids."""

import time
from pathlib import Path


def started(starts: Path) -> list[int]:
    """The pids a test server wrote to `starts`, one a line, as it started."""
    return [int(line) for line in starts.read_text().split()]


def has_exited(pid: int, timeout: float = 10) -> bool:
    """Whether the process `pid` is gone (or a zombie) within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False
