"""A code agent whose module does not load: staff see it and why, users do not see
it, and every endpoint that names it answers JSON with the reason, never a 500."""

import pytest

from agents.adk.builder import sync_code_agents
from agents.models import AgentSpec
from tests.agents import code_modules

pytestmark = pytest.mark.django_db

ERROR = "RuntimeError: WEATHER_API_KEY is not set"
NOT_LOADED = (
    "This agent cannot run now: its code does not load. An administrator sees why "
    "on the Agents page."
)


@pytest.fixture
def staff(make_user):
    return make_user("staff", is_staff=True)


@pytest.fixture
def broken(settings, code_module) -> str:
    """A broken agent (`helper`) beside a good one (`kettle`), synced."""
    source, _ = code_modules.RAISES
    settings.TOOLCRIB_AGENTS = [
        f"{code_module(source)}.helper",
        "tests.agents.kettle.kettle",
    ]
    sync_code_agents()
    return "helper"


def test_staff_see_a_broken_agent_with_its_error_and_users_do_not(
    broken, staff, alice, api_for
):
    listed = {a["name"]: a for a in api_for(staff).get("/api/agents/").json()}
    users = [a["name"] for a in api_for(alice).get("/api/agents/").json()]

    assert set(listed) == {"helper", "kettle"}
    assert listed["helper"]["available"] is False
    assert listed["helper"]["error"].endswith(f"failed to load: {ERROR}")
    assert (listed["kettle"]["available"], listed["kettle"]["error"]) == (True, None)
    assert users == ["kettle"]
    shown = api_for(staff).get("/api/agents/helper/").json()
    assert ERROR in shown["error"]
    assert api_for(alice).get("/api/agents/helper/").status_code == 404


def test_a_session_with_a_broken_agent_is_refused_with_the_reason(
    broken, staff, alice, api_for
):
    as_staff = api_for(staff).post("/api/sessions/", {"agent": "helper"}, "json")
    as_user = api_for(alice).post("/api/sessions/", {"agent": "helper"}, "json")

    assert as_staff.status_code == 400
    [reason] = as_staff.json()["agent"]
    assert ERROR in reason
    assert as_user.status_code == 400
    assert as_user.json() == {"agent": ["No such agent, or you may not use it."]}


def test_the_tools_of_a_broken_agent_answer_json(broken, staff, alice, api_for):
    as_staff = api_for(staff).get("/api/agents/helper/tools/")
    as_user = api_for(alice).get("/api/agents/helper/tools/")

    assert as_staff.status_code == 409
    assert ERROR in as_staff.json()["detail"]
    assert as_user.status_code == 404
    assert as_user.json() == {"detail": "No such agent, or you may not use it."}


def test_the_tools_of_an_agent_that_no_longer_builds_answer_json(
    broken, staff, alice, api_for
):
    """A row agent whose code sub-agent fails to load is usable, but cannot be built."""
    umbrella = AgentSpec.objects.create(name="umbrella", model="offline/demo")
    umbrella.sub_agents.add(AgentSpec.objects.get(name="helper"))

    as_staff = api_for(staff).get("/api/agents/umbrella/tools/")
    as_user = api_for(alice).get("/api/agents/umbrella/tools/")

    assert as_staff.status_code == 409
    assert ERROR in as_staff.json()["detail"]
    assert as_user.status_code == 409
    assert as_user.json() == {"detail": NOT_LOADED}


@pytest.mark.django_db(transaction=True)
def test_a_turn_of_an_agent_that_no_longer_builds_fails_without_its_error(
    broken, alice, start_session, say, events_of
):
    umbrella = AgentSpec.objects.create(name="umbrella", model="offline/demo")
    umbrella.sub_agents.add(AgentSpec.objects.get(name="helper"))
    session = start_session(alice, "umbrella")

    run = say(alice, session, "hello")

    assert run["status"] == "failed"
    assert run["error"] == NOT_LOADED
    [failure] = [
        f["event"] for f in events_of(alice, session) if f["event"]["kind"] == "error"
    ]
    assert failure["error"] == {"code": "AGENT_NOT_LOADED", "message": NOT_LOADED}


def test_an_agent_refused_for_two_tools_of_one_name_answers_json(
    settings, staff, api_for
):
    settings.TOOLCRIB_AGENTS = ["tests.agents.test_transfers.twins"]
    sync_code_agents()

    [listed] = api_for(staff).get("/api/agents/").json()
    tools = api_for(staff).get("/api/agents/twins/tools/")

    assert listed["available"] is False
    assert "two tools named 'lookup'" in listed["error"]
    assert tools.status_code == 409
    assert "two tools named 'lookup'" in tools.json()["detail"]
