"""A change to access counts at the next decision, whether its doorbell rings or not.

Saving a grant rang the users' sockets from `on_commit` without the guard every
other doorbell has: with Redis away the change was committed and the request
answered 500. Now the ring is logged and counted as a failed publish, the request
answers 2xx, and the next model step decides by the database's version counters,
which the commit itself bumps: no doorbell or cache needs to carry the change.
"""

import logging

import pytest
from django.db.models import F

from project import metrics
from tests.live.server import free_port
from tests.toolsets import scripted, tools
from tests.toolsets.conftest import tool, toolset
from toolsets import access, grants
from toolsets.models import AccessVersion, Grant

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def doorbell_down(settings):
    """A Redis channel layer where nothing listens: every ring fails."""
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "project.patches.redis_layer.RedisChannelLayer",
            "CONFIG": {"hosts": [f"redis://127.0.0.1:{free_port()}/0"]},
        }
    }


def publish_failures() -> float:
    return metrics.REGISTRY.get_sample_value("toolcrib_publish_failures_total") or 0.0


def test_a_grant_saved_and_deleted_with_the_doorbell_down_answers_2xx(
    catalog, staff, alice, api_for, doorbell_down, caplog
):
    before = publish_failures()
    body = {"user": "alice", "tool": "rocketeer.launch_rocket", "effect": "allow"}
    with caplog.at_level(logging.WARNING, logger="agents.doorbell.streams"):
        saved = api_for(staff).post("/api/grants/", body, format="json")
        stored = list(Grant.objects.values_list("user__username", "effect"))
        deleted = api_for(staff).delete(f"/api/grants/{saved.json()['id']}/")

    assert saved.status_code == 201, saved.content
    assert stored == [("alice", "allow")]
    assert deleted.status_code == 204, deleted.content
    assert not Grant.objects.exists()
    assert publish_failures() - before == 2
    assert caplog.text.count("access publish failed") == 2


def test_a_turn_after_a_lost_doorbell_decides_by_the_change(
    catalog, staff, alice, api_for, start_session, say, doorbell_down
):
    grants.update_toolset(toolset=toolset("rocketeer"), default_policy="granted_only")
    session = start_session(alice, "rocketeer")
    say(alice, session, "go")  # not offered: no grant
    body = {"user": "alice", "tool": "rocketeer.launch_rocket", "effect": "allow"}

    granted = api_for(staff).post("/api/grants/", body, format="json")
    say(alice, session, "go")
    revoked = api_for(staff).delete(f"/api/grants/{granted.json()['id']}/")
    say(alice, session, "go")

    assert (granted.status_code, revoked.status_code) == (201, 204)
    launches = ["launch_rocket" in offered for offered in scripted.OFFERED[::2]]
    assert launches == [False, True, False]
    assert tools.LAUNCHES == ["moon"]


def test_a_change_another_process_committed_counts_at_the_next_decision(catalog, alice):
    grants.update_toolset(toolset=toolset("rocketeer"), default_policy="granted_only")
    name = "rocketeer.launch_rocket"
    before = access.explain(user_id=alice.pk, tool=name)

    # As another process commits a grant: rows (no signal here), then the counter.
    Grant.objects.bulk_create([Grant(user=alice, tool=tool(name), effect="allow")])
    AccessVersion.objects.filter(pk=1).update(grants=F("grants") + 1)
    after = access.explain(user_id=alice.pk, tool=name)

    assert (before.allowed, after.allowed) == (False, True)
