"""events_after and events_before: what a client missed, and the page before it."""

import pytest

from agents.events.log import events_after, events_before

pytestmark = pytest.mark.django_db(transaction=True)


def test_events_after_a_seq_come_in_seq_order_up_to_the_limit(
    demo_agents, alice, start_session, say
):
    session = start_session(alice, "weather_sentiment")
    say(alice, session, "weather in paris")  # six events

    assert [r.seq for r in events_after(session_id=session, after=2)] == [3, 4, 5, 6]
    assert [r.seq for r in events_after(session_id=session, after=2, limit=2)] == [3, 4]
    assert events_after(session_id=session, after=6) == []


def test_events_before_a_seq_are_the_newest_below_it_in_seq_order(
    demo_agents, alice, start_session, say
):
    session = start_session(alice, "weather_sentiment")
    say(alice, session, "weather in paris")  # six events

    assert [r.seq for r in events_before(session_id=session, before=None)] == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]
    assert [r.seq for r in events_before(session_id=session, before=None, limit=2)] == [
        5,
        6,
    ]
    assert [r.seq for r in events_before(session_id=session, before=5, limit=3)] == [
        2,
        3,
        4,
    ]
    assert [
        r.seq for r in events_before(session_id=session, before=6, after=3, limit=9)
    ] == [4, 5]
    assert events_before(session_id=session, before=1) == []
