"""`make run` with an extra agent whose module raises on import: migrate and
demo_setup succeed, every good agent is synced, and the server starts and lists
the broken one, with its error, to staff."""

import sqlite3
import subprocess
import sys

import httpx

from tests.agents import code_modules
from tests.live.server import ROOT, daphne, server_env

BROKEN = "broken_extra_agent"


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_broken_extra_agent_leaves_the_others_and_the_server_running(tmp_path):
    source, error = code_modules.RAISES
    (tmp_path / f"{BROKEN}.py").write_text(source)
    database = tmp_path / "run.sqlite3"
    env = server_env(
        {
            "DATABASE_URL": f"sqlite:///{database}",
            "TOOLCRIB_DATA_DIR": str(tmp_path),
            "TOOLCRIB_EXTRA_AGENTS": f"{BROKEN}.helper,tests.agents.kettle.kettle",
            "PYTHONPATH": str(tmp_path),
        }
    )

    migrated = manage(env, "migrate", "--noinput")
    set_up = manage(env, "demo_setup")

    assert migrated.returncode == 0, migrated.stderr
    assert set_up.returncode == 0, set_up.stderr
    assert "kettle" in set_up.stdout.split("Agents: ")[1].splitlines()[0]
    assert f"Agent helper left out: {BROKEN}.helper failed to load: {error}" in (
        set_up.stderr
    )
    with sqlite3.connect(database) as db:
        rows = dict(db.execute("SELECT name, missing FROM agents_agentspec"))
    assert (rows["kettle"], rows["weather_sentiment"], rows["helper"]) == (0, 0, 1)
    with daphne(env, tmp_path / "daphne.log") as server:
        token = server.token("admin", "admin")
        listed = httpx.get(
            f"{server.url}/api/agents/", headers={"Authorization": f"Token {token}"}
        ).json()
    agents = {agent["name"]: agent for agent in listed}
    assert agents["kettle"]["available"] is True
    assert (agents["helper"]["available"], agents["helper"]["error"]) == (
        False,
        f"{BROKEN}.helper failed to load: {error}",
    )
