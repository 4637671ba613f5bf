"""events_after: what a client that has seen up to a seq has missed."""

import pytest

from agents.events.log import events_after

pytestmark = pytest.mark.django_db(transaction=True)


def test_events_after_a_seq_come_in_seq_order_up_to_the_limit(
    demo_agents, alice, start_session, say
):
    session = start_session(alice, "weather_sentiment")
    say(alice, session, "weather in paris")  # six events

    assert [r.seq for r in events_after(session_id=session, after=2)] == [3, 4, 5, 6]
    assert [r.seq for r in events_after(session_id=session, after=2, limit=2)] == [3, 4]
    assert events_after(session_id=session, after=6) == []
