"""`toolcrib eval run` for CI, as a CI job runs it: a process of its own (on the
scripted model server), with its exit code, JSON and JUnit XML."""

import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tests.agents import fake_openai as fake

ROOT = Path(__file__).resolve().parents[2]
TOOLCRIB = Path(sys.executable).parent / "toolcrib"

SETUP = """
import django; django.setup()
from django.contrib.auth import get_user_model
from agents.runtime import sync_code_agents
from evals.models import EvalCase, EvalSet
from tests.evals.conftest import invocation
sync_code_agents()
alice = get_user_model().objects.create_user(username="alice", password="pw")
s = EvalSet.objects.create(owner=alice, name="weather",
    criteria={"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "EXACT"}})
report = {"status": "success", "report": "Recorded: foggy."}
EvalCase.objects.create(eval_set=s, eval_id="london", position=0, conversation=[
    invocation("weather in london?",
               calls=[("get_weather_report", {"city": "london"}, report)])])
EvalCase.objects.create(eval_set=s, eval_id="paris-expected", position=1, conversation=[
    invocation("weather in london?",
               calls=[("get_weather_report", {"city": "paris"}, report)])])
"""


@pytest.fixture(scope="module")
def provider():
    with fake.FakeOpenAI() as server:
        yield server


@pytest.fixture(scope="module")
def site(tmp_path_factory, provider):
    """An installation of its own: a fresh SQLite database, migrated, one set."""
    home = tmp_path_factory.mktemp("site")
    env = {
        **provider.env(),
        "TOOLCRIB_DEFAULT_MODEL": f"openai/{fake.MODEL}",
        "TOOLCRIB_MODEL_RETRIES": "0",
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "project.settings",
        "DATABASE_URL": f"sqlite:///{home / 'db.sqlite3'}",
        "TOOLCRIB_DATA_DIR": str(home),
        "TOOLCRIB_DEMO": "1",
        "SECRET_KEY": "x",
    }
    for command in (
        [sys.executable, "manage.py", "migrate", "-v0"],
        [sys.executable, "-c", SETUP],
    ):
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    return home, env


def toolcrib(site, *args):
    home, env = site
    return subprocess.run(
        [str(TOOLCRIB), "eval", "run", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def play_both_cases(provider):
    """Each case's turn: London's weather asked for, then an answer."""
    for _ in range(2):
        provider.play(
            fake.call("get_weather_report", city="london"), fake.say("Foggy.")
        )


def test_below_the_threshold_exits_1_with_json_and_junit(site, provider):
    play_both_cases(provider)
    home, _ = site
    out, xml = home / "out.json", home / "out.xml"

    done = toolcrib(
        site,
        "weather",
        "--agent",
        "weather_sentiment",
        "--json",
        str(out),
        "--junit",
        str(xml),
    )

    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(out.read_text())
    assert report["score"] == 0.5 and report["passed"] is False
    statuses = {case["eval_id"]: case["status"] for case in report["cases"]}
    assert statuses == {"london": "passed", "paris-expected": "failed"}
    suite = ET.parse(xml).getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    failed = suite.find("testcase[@name='paris-expected']/failure")
    assert "tool_trajectory_avg_score: 0.0 (threshold 1.0)" in failed.get("message")
    assert suite.find("testcase[@name='london']/failure") is None


def test_at_the_threshold_exits_0(site, provider):
    play_both_cases(provider)
    done = toolcrib(
        site, "weather", "--agent", "weather_sentiment", "--threshold", "0.5"
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed" in done.stdout.splitlines()[-1]


@pytest.mark.parametrize(
    "args",
    [
        ["nothing-here", "--agent", "weather_sentiment"],
        ["weather", "--agent", "no_such_agent"],
        ["weather", "--agent", "weather_sentiment", "--as", "nobody"],
    ],
)
def test_bad_input_exits_2(site, args):
    done = toolcrib(site, *args)

    assert done.returncode == 2, done.stdout + done.stderr
