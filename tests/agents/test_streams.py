"""Toolcrib's own events: stored under the session's next seq, then the doorbell."""

import json

import pytest
from channels.layers import get_channel_layer
from redis.exceptions import RedisError

from agents.doorbell import streams
from agents.events.log import arecord_and_publish, events_after, record_and_publish
from agents.models import Session

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS_CHANGED = {"text": "alice activated toolset math.", "toolsets": {"math": True}}


@pytest.fixture
def session(demo_agents, alice, start_session) -> Session:
    return Session.objects.get(pk=start_session(alice, "weather_sentiment"))


async def test_a_recorded_event_takes_the_next_seq_and_rings_with_it(session):
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(streams.session_group(session.id), channel)

    first = await arecord_and_publish(
        session=session, kind="tools_changed", data=TOOLS_CHANGED
    )
    second = await arecord_and_publish(
        session=session, kind="tools_changed", data=TOOLS_CHANGED
    )

    rung = [json.loads((await layer.receive(channel))["text"]) for _ in range(2)]
    assert second.seq == first.seq + 1
    assert [(f["seq"], f["event"]["kind"], f["event"]["author"]) for f in rung] == [
        (first.seq, "tools_changed", "system"),
        (second.seq, "tools_changed", "system"),
    ]


def test_a_failed_doorbell_is_logged_and_the_event_kept(session, monkeypatch, caplog):
    async def redis_away(**message):
        raise RedisError("Connection refused")

    monkeypatch.setattr(streams, "apublish", redis_away)

    row = record_and_publish(session=session, kind="tools_changed", data=TOOLS_CHANGED)

    assert [r.pk for r in events_after(session_id=session.id, after=row.seq - 1)] == [
        row.pk
    ]
    assert "publish failed" in caplog.text
