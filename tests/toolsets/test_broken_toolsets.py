"""A toolset of TOOLCRIB_EXTRA_TOOLSETS whose module fails to import stops nothing:
the catalog lists it broken with the error, every other agent answers, and the
server starts, migrates and serves."""

import httpx
import pytest
from django.core import checks
from django.core.management import call_command

from agents.models import AgentSpec
from tests.live.server import daphne, prepare_database, server_env
from toolsets.catalog import sync_catalog
from toolsets.models import Tool, Toolset

pytestmark = pytest.mark.django_db(transaction=True)

BROKEN = "broken=tests.toolsets.broken_toolset.toolset"
ERROR = "RuntimeError: the module of this toolset is broken"


@pytest.fixture
def broken(settings):
    name, path = BROKEN.split("=")
    settings.TOOLCRIB_TOOLSETS = {**settings.TOOLCRIB_TOOLSETS, name: path}
    return name


def test_the_catalog_lists_it_broken_with_the_error(
    broken, demo_agents, make_user, api_for
):
    report = sync_catalog()

    assert report.failed == ["broken"]
    assert Tool.objects.filter(toolset__name="math", missing=False).exists()
    listed = api_for(make_user(is_staff=True)).get("/api/toolsets/").json()
    rows = {row["name"]: row for row in listed}
    assert rows["broken"]["broken"] == ERROR
    assert rows["broken"]["origin"] == "tests.toolsets.broken_toolset.toolset"
    assert rows["math"]["broken"] is None


def test_its_tools_stay_catalogued_while_it_is_broken(settings, demo_agents):
    settings.TOOLCRIB_TOOLSETS = {
        **settings.TOOLCRIB_TOOLSETS,
        "numbers": "toolsets.builtin.calculator.toolset",
    }
    sync_catalog()
    settings.TOOLCRIB_TOOLSETS = {
        **settings.TOOLCRIB_TOOLSETS,
        "numbers": "tests.toolsets.broken_toolset.toolset",
    }

    sync_catalog()

    numbers = Toolset.objects.get(name="numbers")
    assert not numbers.missing
    assert not numbers.tools.filter(missing=True).exists()


def test_every_other_agent_answers(broken, demo_agents, alice, start_session, say):
    session = start_session(alice, "calculator")

    run = say(alice, session, "what is 2 + 3")

    assert run["status"] == "succeeded", run


def test_an_agent_that_lists_it_fails_saying_why(broken, alice, start_session, say):
    AgentSpec.objects.create(
        name="uses-broken", model="offline/demo", instruction="x", toolsets=[broken]
    )
    session = start_session(alice, "uses-broken")

    run = say(alice, session, "hello")

    assert run["status"] == "failed"
    assert "toolset 'broken' does not load" in run["error"]
    # What its code raised is for staff (the catalog), not for whoever chats.
    assert ERROR not in run["error"]
    assert "tests.toolsets" not in run["error"]


def test_manage_py_check_warns_and_passes(broken):
    warnings = [m for m in checks.run_checks() if m.id == "toolsets.W002"]

    call_command("check")  # warnings never fail the command
    assert [(w.level, ERROR in w.msg) for w in warnings] == [(checks.WARNING, True)]


def test_the_server_migrates_and_serves(tmp_path):
    env = server_env(
        {
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "TOOLCRIB_DATA_DIR": str(tmp_path),
            "TOOLCRIB_EXTRA_TOOLSETS": BROKEN,
        }
    )
    prepare_database(env)  # migrate and demo_setup, as `make run` does

    with daphne(env, tmp_path / "daphne.log") as server:
        token = server.token("admin", "admin")
        listed = httpx.get(
            f"{server.url}/api/toolsets/", headers={"Authorization": f"Token {token}"}
        )

    assert listed.status_code == 200
    assert {row["name"]: row["broken"] for row in listed.json()}["broken"] == ERROR
