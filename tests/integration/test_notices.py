"""Notices on the production path: a turn on a worker pauses for an approval, and
the worker (not the web process, not the turn) posts its webhook notice."""

import asyncio

import pytest

from tests.agents.notices.conftest import Receiver
from tests.integration.clients import Client

pytestmark = pytest.mark.integration


async def wait_for(predicate, seconds: float = 30.0):
    async with asyncio.timeout(seconds):
        while not (found := await predicate()):
            await asyncio.sleep(0.2)
    return found


async def test_a_worker_posts_the_notice_of_an_approval_and_logs_it(cluster):
    receiver = Receiver()
    staff = Client.sign_in(cluster.webs[0], "admin")
    async with staff.http() as http:
        made = await http.post(
            "/api/notices/webhooks/",
            json={
                "name": "integration-approvals",
                "url": receiver.url("/hook"),
                "kinds": ["approval"],
            },
        )
    assert made.status_code == 201, made.text
    try:
        alice = Client.sign_in(cluster.webs[1], "alice")
        session = await alice.create_session("bank")
        run = await alice.wait_for_run(await alice.say(session, 'wire 500 to "bob"'))
        assert run["waiting_for"] == "approval"

        async def posted():
            return receiver.posts

        await wait_for(posted)
        body = receiver.json()
        assert body["request"]["tool"] == "wire_money"
        assert body["request"]["requester"] == "alice"

        async def logged():
            async with staff.http() as http:
                rows = (await http.get("/api/notices/deliveries/?status=sent")).json()
            return [row for row in rows if row["address"] == "integration-approvals"]

        (delivery,) = await wait_for(logged)
        assert delivery["attempts"] == 1
    finally:
        async with staff.http() as http:
            await http.delete(f"/api/notices/webhooks/{made.json()['id']}/")
        receiver.close()
