"""Several senders at once (a worker's threads, and here also the timer thread the
queueing itself starts) send each notice once: a delivery is taken by a
conditional UPDATE."""

import time

import pytest
from django.db import connection

from agents.models import Delivery
from agents.notices.enqueue import enqueue
from agents.notices.sending import send_due
from tests.agents.notices.conftest import make_destination
from tests.threads import at_once

pytestmark = pytest.mark.django_db(transaction=True)


def sending(index: int) -> int:
    try:
        return send_due()
    finally:
        connection.close()


def all_sent() -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not Delivery.objects.exclude(status="sent").exists():
            return True
        time.sleep(0.05)
    return False


def test_senders_at_once_send_each_notice_once(receiver, make_request):
    for number in range(3):
        make_destination(
            name=f"channel-{number}",
            url=receiver.url(f"/{number}"),
            kinds=["approval"],
        )
    enqueue([make_request() for _ in range(4)])

    sent = at_once(sending, threads=6)

    assert all_sent()
    assert sum(sent) <= 12  # the rest by the timer thread
    assert sorted(path for path, _, _ in receiver.posts) == sorted(
        f"/{number}" for number in range(3) for _ in range(4)
    )
    assert {d.attempts for d in Delivery.objects.all()} == {1}
