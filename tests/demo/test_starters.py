"""Every demo agent offers conversation starters, and each one works on the offline
model: sent into an empty session, it makes the agent call one of its tools (or hand
the conversation over), where a prompt it does not match gets "You said: ..."."""

import pytest
from django.conf import settings
from django.core.management import call_command

pytestmark = pytest.mark.django_db(transaction=True)

DEMO_NAMES = [path.rsplit(".", 1)[-1] for path in settings.DEMO_AGENTS]


@pytest.fixture
def catalog(demo_agents):
    call_command("sync_tools", verbosity=0)
    return demo_agents


def test_every_demo_agent_has_two_to_four_starters(demo_agents):
    for name in DEMO_NAMES:
        starters = demo_agents[name].starters
        assert 2 <= len(starters) <= 4, (name, starters)


@pytest.mark.parametrize("name", DEMO_NAMES)
def test_each_starter_makes_the_offline_agent_act(
    name, catalog, alice, start_session, say, events_of
):
    for starter in catalog[name].starters:
        session_id = start_session(alice, name)

        run = say(alice, session_id, starter)

        assert run["status"] in {"succeeded", "waiting"}, (starter, run)
        events = [frame["event"] for frame in events_of(alice, session_id)]
        acted = [
            call["name"]
            for event in events
            for call in event.get("function_calls") or []
        ]
        assert acted, (starter, events)
