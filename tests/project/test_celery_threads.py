"""project.celery's Redis channel under a worker's threads: the client a channel
keeps (RedisChannel) is never used by two threads at once, since a publisher
borrows its connection and channel from kombu's producer pool, one thread at a
time. Threads publishing at once each hold a channel of their own, each with a
client of its own pool."""

import threading

import pytest
from kombu import Connection
from kombu.pools import producers

from project.celery import RedisChannel, RedisTransport
from tests.integration import services
from tests.threads import at_once


@pytest.fixture
def connection():
    with services.redis_prefix("toolcrib-threads-celery") as url:
        made = Connection(url, transport=RedisTransport)
        yield made
        producers[made].force_close_all()
        made.release()


def test_threads_publishing_at_once_each_hold_a_channel_of_their_own(connection):
    all_holding = threading.Barrier(8)

    def publish(index: int):
        with producers[connection].acquire(block=True, timeout=10) as producer:
            channel = producer.channel
            client = channel._create_client()
            assert client.ping()
            all_holding.wait(30)  # every thread holds its channel at once
            return channel, client

    held = at_once(publish)

    assert all(isinstance(channel, RedisChannel) for channel, _ in held)
    assert len({id(channel) for channel, _ in held}) == 8
    assert all(client.connection_pool is channel.pool for channel, client in held)
