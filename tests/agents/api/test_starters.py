"""Conversation starters on agents, and what an agent on the offline model says it
understands: defined in code or by staff, validated, shown to every user."""

import pytest

from agents.adk.builder import code_agent_starters, sync_code_agents
from agents.adk.offline_matching import THRESHOLD
from agents.inputs import STARTER_MAX_CHARS, STARTERS_MAX
from demo import weather

pytestmark = pytest.mark.django_db

BAD_AGENT = "tests.agents.starters_agents.badly_started"


@pytest.fixture
def staff(make_user):
    return make_user("staff", is_staff=True)


def test_staff_define_starters_and_every_user_sees_them(staff, alice, api_for):
    created = api_for(staff).post(
        "/api/agents/",
        {"name": "helper", "instruction": "Help.", "starters": ["  Hi there ", "Go"]},
        format="json",
    )

    assert created.status_code == 201, created.content
    shown = api_for(alice).get("/api/agents/helper/").json()
    assert shown["starters"] == ["Hi there", "Go"]


def test_staff_change_the_starters_of_an_agent_row(staff, api_for):
    client = api_for(staff)
    client.post("/api/agents/", {"name": "helper", "instruction": "Help."}, "json")

    changed = client.patch(
        "/api/agents/helper/", {"starters": ["Add 2 and 3"]}, format="json"
    )

    assert changed.status_code == 200, changed.content
    assert client.get("/api/agents/helper/").json()["starters"] == ["Add 2 and 3"]


@pytest.mark.parametrize(
    ("starters", "says"),
    [
        ("Add 2 and 3", "A list of prompts"),
        (["Add", 2], "A list of prompts"),
        (["x"] * (STARTERS_MAX + 1), f"At most {STARTERS_MAX} starters"),
        (["fine", "   "], "Starter 2: it must not be blank"),
        (["y" * (STARTER_MAX_CHARS + 1)], f"at most {STARTER_MAX_CHARS} characters"),
        (["two\nlines"], "one line"),
        (["same", "same"], "Starter 2: the same as an earlier one"),
        (["nul\x00"], "NUL"),
    ],
)
def test_bad_starters_are_400_with_field_errors(staff, api_for, starters, says):
    response = api_for(staff).post(
        "/api/agents/",
        {"name": "helper", "instruction": "Help.", "starters": starters},
        format="json",
    )

    assert response.status_code == 400, response.content
    assert says in " ".join(response.json()["starters"])


def test_code_agents_take_their_starters_from_their_module(demo_agents, alice, api_for):
    shown = api_for(alice).get("/api/agents/weather_sentiment/").json()

    assert shown["starters"] == weather.STARTERS["weather_sentiment"]


def test_a_code_agents_starters_are_changed_in_code(demo_agents, staff, api_for):
    response = api_for(staff).patch(
        "/api/agents/weather_sentiment/", {"starters": ["Hi"]}, format="json"
    )

    assert response.status_code == 400
    assert (
        demo_agents["weather_sentiment"].starters
        == weather.STARTERS["weather_sentiment"]
    )


def test_bad_starters_in_code_are_dropped_and_the_agent_still_loads(settings, caplog):
    settings.TOOLCRIB_AGENTS = [BAD_AGENT]

    specs = sync_code_agents()

    assert [spec.name for spec in specs] == ["badly_started"]
    assert specs[0].starters == []
    assert "bad conversation starters" in caplog.text


def test_a_module_without_starters_declares_none():
    assert code_agent_starters("tests.agents.starters_agents.unstarted") == []


def test_an_agent_on_the_offline_model_says_what_it_understands(staff, alice, api_for):
    api_for(staff).post(
        "/api/agents/",
        {"name": "helper", "instruction": "Help.", "model": "offline/demo"},
        format="json",
    )

    offline = api_for(alice).get("/api/agents/helper/").json()["offline"]

    assert "offline demo model" in offline["summary"]
    rules = " ".join(offline["rules"])
    assert f"needs {THRESHOLD} points" in rules
    assert "name=value" in rules
    assert "You said:" in rules


def test_an_agent_on_a_real_model_has_no_offline_notes(staff, alice, api_for):
    api_for(staff).post(
        "/api/agents/",
        {"name": "helper", "instruction": "Help.", "model": "gpt-4o"},
        format="json",
    )

    assert api_for(alice).get("/api/agents/helper/").json()["offline"] is None
