"""Access resolution: the table of rules, caching, invalidation and the services."""

import time
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.utils import timezone

from agents.doorbell import streams
from agents.models import AgentSpec
from agents.sessions import create_session
from agents.tokens import issue_token
from project.asgi import application
from toolsets import access, grants
from toolsets.models import Grant, Tool, Toolset

pytestmark = pytest.mark.django_db

PAST = timedelta(hours=-1)
FUTURE = timedelta(hours=1)


@pytest.fixture
def world(make_user, make_group):
    """One toolset with two tools; alice in group ops, bob in nothing."""
    alice, bob = make_user("alice"), make_user("bob")
    ops = make_group("ops", alice)
    others = make_group("others", bob)
    ts = Toolset.objects.create(name="ts")
    tools = [
        Tool.objects.create(toolset=ts, name=name, full_name=f"ts.{name}")
        for name in ("t1", "t2")
    ]
    return {
        "alice": alice,
        "bob": bob,
        "ops": ops,
        "others": others,
        "ts": ts,
        "t1": tools[0],
        "t2": tools[1],
    }


def add_grant(world, subject: str, target: str, effect: str, expires=None) -> Grant:
    """A grant row; `expires` is an offset from now (expired grants can't be made
    through the service)."""
    who = world[subject]
    return Grant.objects.create(
        **({"user": who} if subject in {"alice", "bob"} else {"group": who}),
        **(
            {"tool": world[target]}
            if target.startswith("t") and target != "ts"
            else {"toolset": world[target]}
        ),
        effect=effect,
        expires_at=timezone.now() + expires if expires is not None else None,
    )


# (grants, policy, tool enabled, toolset enabled) -> (allowed, reason); for alice on ts.t1
CASES = {
    "open, nothing": ([], "open", True, True, True, "policy"),
    "granted_only, nothing": ([], "granted_only", True, True, False, "policy"),
    "user allow tool": (
        [("alice", "t1", "allow")],
        "granted_only",
        True,
        True,
        True,
        "allow",
    ),
    "group allow tool": (
        [("ops", "t1", "allow")],
        "granted_only",
        True,
        True,
        True,
        "allow",
    ),
    "user allow toolset": (
        [("alice", "ts", "allow")],
        "granted_only",
        True,
        True,
        True,
        "allow",
    ),
    "group allow toolset": (
        [("ops", "ts", "allow")],
        "granted_only",
        True,
        True,
        True,
        "allow",
    ),
    "user deny tool": ([("alice", "t1", "deny")], "open", True, True, False, "deny"),
    "group deny tool": ([("ops", "t1", "deny")], "open", True, True, False, "deny"),
    "user deny toolset": ([("alice", "ts", "deny")], "open", True, True, False, "deny"),
    "group deny toolset": ([("ops", "ts", "deny")], "open", True, True, False, "deny"),
    "user allow tool, group deny toolset": (
        [("alice", "t1", "allow"), ("ops", "ts", "deny")],
        "open",
        True,
        True,
        False,
        "deny",
    ),
    "group allow tool, user deny tool": (
        [("ops", "t1", "allow"), ("alice", "t1", "deny")],
        "granted_only",
        True,
        True,
        False,
        "deny",
    ),
    "allow on the other tool": (
        [("alice", "t2", "allow")],
        "granted_only",
        True,
        True,
        False,
        "policy",
    ),
    "deny on another user": (
        [("bob", "t1", "deny")],
        "open",
        True,
        True,
        True,
        "policy",
    ),
    "deny on a group alice is not in": (
        [("others", "ts", "deny")],
        "open",
        True,
        True,
        True,
        "policy",
    ),
    "tool disabled, user allow": (
        [("alice", "t1", "allow")],
        "open",
        False,
        True,
        False,
        "disabled",
    ),
    "toolset disabled, user allow": (
        [("alice", "ts", "allow")],
        "open",
        True,
        False,
        False,
        "disabled",
    ),
    "expired deny": (
        [("alice", "t1", "deny", PAST)],
        "open",
        True,
        True,
        True,
        "policy",
    ),
    "expired allow": (
        [("ops", "ts", "allow", PAST)],
        "granted_only",
        True,
        True,
        False,
        "policy",
    ),
    "allow until later": (
        [("alice", "t1", "allow", FUTURE)],
        "granted_only",
        True,
        True,
        True,
        "allow",
    ),
    "deny until later": (
        [("ops", "t1", "deny", FUTURE)],
        "open",
        True,
        True,
        False,
        "deny",
    ),
}


@pytest.mark.parametrize(
    ("grants", "policy", "tool_on", "toolset_on", "allowed", "reason"),
    list(CASES.values()),
    ids=list(CASES),
)
def test_resolution_table(world, grants, policy, tool_on, toolset_on, allowed, reason):
    made = [add_grant(world, *grant) for grant in grants]
    Toolset.objects.filter(pk=world["ts"].pk).update(
        default_policy=policy, enabled=toolset_on
    )
    Tool.objects.filter(pk=world["t1"].pk).update(enabled=tool_on)
    access.invalidate()

    decision = access.explain(user_id=world["alice"].pk, tool="ts.t1")

    assert (decision.allowed, decision.reason) == (allowed, reason)
    if reason in {"allow", "deny"}:
        deciding = next(g for g in made if g.pk == decision.grant_id)
        assert deciding.effect == reason
        assert f"grant #{deciding.pk}" in decision.rule


def test_rules_read_as_sentences(world):
    grant = add_grant(world, "ops", "ts", "deny")
    access.invalidate()

    decision = access.explain(user_id=world["alice"].pk, tool="ts.t1")

    assert decision.rule == f"denied by grant #{grant.pk}: group ops on toolset ts"
    open_rule = access.explain(user_id=world["bob"].pk, tool="ts.t1").rule
    assert open_rule == "toolset ts is open to everyone"


def test_tool_level_grant_is_named_before_toolset_level(world):
    add_grant(world, "ops", "ts", "deny")
    user_tool = add_grant(world, "alice", "t1", "deny")
    access.invalidate()

    assert (
        access.explain(user_id=world["alice"].pk, tool="ts.t1").grant_id == user_tool.pk
    )


def test_missing_and_unknown_tools_are_refused(world):
    Tool.objects.filter(pk=world["t1"].pk).update(missing=True)
    access.invalidate()

    assert access.explain(user_id=world["alice"].pk, tool="ts.t1").reason == "missing"
    unknown = access.explain(user_id=world["alice"].pk, tool="ts.nope")
    assert (unknown.allowed, unknown.reason) == (False, "unknown")


def test_warm_decisions_read_only_the_versions(world, django_assert_num_queries):
    user, tools = world["alice"].pk, ["ts.t1", "ts.t2"]
    with django_assert_num_queries(3):  # the versions, the catalog, her grants
        access.explain_many(user_id=user, tools=tools)

    with django_assert_num_queries(1):  # the versions
        decisions = access.explain_many(user_id=user, tools=tools)
    snapshot = async_to_sync(access.asnapshot)()
    with django_assert_num_queries(0):  # a model step's calls, by its reading
        access.explain_many(user_id=user, tools=tools, snapshot=snapshot)

    assert all(d.allowed for d in decisions.values())


def test_another_user_costs_one_query_more(world, django_assert_num_queries):
    access.explain(user_id=world["alice"].pk, tool="ts.t1")

    with django_assert_num_queries(2):  # the versions, his grants
        access.explain(user_id=world["bob"].pk, tool="ts.t1")


def test_a_grant_change_rereads_only_the_grants(world, django_assert_num_queries):
    alice = world["alice"]
    access.explain(user_id=alice.pk, tool="ts.t1")
    grants.grant_tool(target=world["t1"], effect="deny", user=alice)

    with django_assert_num_queries(2):  # the versions, her grants
        assert not access.is_allowed(user_id=alice.pk, tool="ts.t1")


def test_grant_change_invalidates_cached_decisions(world):
    alice = world["alice"]
    assert access.is_allowed(user_id=alice.pk, tool="ts.t1")

    grant, created = grants.grant_tool(target=world["t1"], effect="deny", user=alice)

    assert created
    assert not access.is_allowed(user_id=alice.pk, tool="ts.t1")
    grants.revoke(grant=grant)
    assert access.is_allowed(user_id=alice.pk, tool="ts.t1")


def test_group_membership_change_invalidates(world):
    alice, bob, ops = world["alice"], world["bob"], world["ops"]
    grants.grant_tool(target=world["ts"], effect="deny", group=ops)
    assert access.is_allowed(user_id=bob.pk, tool="ts.t1")

    bob.groups.add(ops)
    assert not access.is_allowed(user_id=bob.pk, tool="ts.t1")
    ops.user_set.remove(alice)
    assert access.is_allowed(user_id=alice.pk, tool="ts.t1")
    ops.user_set.clear()
    assert access.is_allowed(user_id=bob.pk, tool="ts.t1")


def test_toolset_and_tool_changes_invalidate(world):
    alice = world["alice"]
    assert access.is_allowed(user_id=alice.pk, tool="ts.t1")

    grants.update_toolset(toolset=world["ts"], default_policy="granted_only")
    assert not access.is_allowed(user_id=alice.pk, tool="ts.t1")
    grants.grant_tool(target=world["t1"], effect="allow", user=alice)
    assert access.is_allowed(user_id=alice.pk, tool="ts.t1")
    grants.update_tool(tool=world["t1"], enabled=False)
    assert access.explain(user_id=alice.pk, tool="ts.t1").reason == "disabled"


def test_rows_saved_by_hand_still_invalidate(world):
    alice = world["alice"]
    assert access.is_allowed(user_id=alice.pk, tool="ts.t1")

    Grant.objects.create(user=alice, tool=world["t1"], effect="deny")

    assert not access.is_allowed(user_id=alice.pk, tool="ts.t1")


def test_a_cached_grant_stops_applying_when_it_expires(world):
    alice = world["alice"]
    grants.grant_tool(
        target=world["t1"],
        effect="deny",
        user=alice,
        expires_at=timezone.now() + timedelta(seconds=0.3),
    )
    assert not access.is_allowed(user_id=alice.pk, tool="ts.t1")

    time.sleep(0.35)

    assert access.is_allowed(user_id=alice.pk, tool="ts.t1")


def test_granting_again_replaces_the_grant(world):
    alice = world["alice"]
    first, _ = grants.grant_tool(target=world["t1"], effect="deny", user=alice)

    second, created = grants.grant_tool(target=world["t1"], effect="allow", user=alice)

    assert not created and second.pk == first.pk
    assert Grant.objects.get().effect == "allow"


def test_a_grant_names_one_subject(world):
    with pytest.raises(ValueError):
        grants.grant_tool(target=world["t1"], effect="allow")


def test_database_refuses_a_grant_with_two_subjects_or_two_targets(world):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        Grant.objects.create(
            user=world["alice"], group=world["ops"], tool=world["t1"], effect="allow"
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        Grant.objects.create(
            user=world["alice"], tool=world["t1"], toolset=world["ts"], effect="allow"
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        Grant.objects.create(user=world["alice"], effect="allow")


def test_toolset_cell_of_the_matrix(world):
    add_grant(world, "alice", "t1", "deny")
    access.invalidate()

    [row] = access.access_matrix(user_id=world["alice"].pk)

    assert row.toolset.name == "ts"
    assert row.decision.allowed  # the toolset as a whole is open
    assert dict((name, d.allowed) for name, d in row.tools) == {
        "ts.t1": False,
        "ts.t2": True,
    }


@pytest.mark.django_db(transaction=True)
async def test_async_twin_answers_the_same(world):
    alice = world["alice"]
    await sync_to_async(add_grant)(world, "ops", "t2", "deny")
    await sync_to_async(access.invalidate)()

    decisions = await access.aexplain_many(user_id=alice.pk, tools=["ts.t1", "ts.t2"])
    again = await access.aexplain(user_id=alice.pk, tool="ts.t2")

    assert [d.allowed for d in decisions.values()] == [True, False]
    assert again == decisions["ts.t2"]


async def _next_message(channel: str) -> dict:
    import asyncio

    layer = get_channel_layer()
    return await asyncio.wait_for(layer.receive(channel), timeout=5)


@pytest.mark.django_db(transaction=True)
async def test_grant_change_rings_the_users_socket_group(world):
    layer = get_channel_layer()
    alice, bob = world["alice"], world["bob"]
    alice_channel, bob_channel = await layer.new_channel(), await layer.new_channel()
    # The groups a session socket joins (agents.realtime.consumers).
    for user, channel in ((alice, alice_channel), (bob, bob_channel)):
        await layer.group_add(streams.user_group(user.pk), channel)
        await layer.group_add(streams.everyone_group(), channel)

    await sync_to_async(grants.grant_tool)(
        target=world["t1"], effect="deny", group=world["ops"]
    )

    message = await _next_message(alice_channel)
    assert message == {
        "type": "access.changed",
        "kind": "tools_changed",
        "tools": ["ts.t1"],
    }
    await sync_to_async(grants.update_toolset)(toolset=world["ts"], enabled=False)
    assert (await _next_message(alice_channel))["tools"] == ["ts"]
    assert (await _next_message(bob_channel))["tools"] == [
        "ts"
    ]  # everyone: not ops-only
    # Each socket heard it once: one message, not one per group it is in.
    assert await _nothing_more(alice_channel)
    assert await _nothing_more(bob_channel)


async def _nothing_more(channel: str) -> bool:
    import asyncio

    try:
        await asyncio.wait_for(get_channel_layer().receive(channel), timeout=0.3)
    except TimeoutError:
        return True
    return False


@pytest.mark.django_db(transaction=True)
async def test_a_change_for_everyone_is_one_send_however_many_users(world):
    """Disabling a toolset rings every socket with one group send, not one per user,
    and a socket of any user hears it."""
    user_model = get_user_model()
    await user_model.objects.abulk_create(
        [user_model(username=f"extra{i}") for i in range(50)]
    )
    layer = get_channel_layer()
    socket = await layer.new_channel()
    await layer.group_add(streams.everyone_group(), socket)
    sent: list[list[str]] = []
    real_send = streams.asend_to_groups

    async def counting_send(groups, message):
        sent.append(list(groups))
        await real_send(groups, message)

    streams.asend_to_groups = counting_send
    try:
        await sync_to_async(grants.update_toolset)(toolset=world["ts"], enabled=False)
    finally:
        streams.asend_to_groups = real_send
    assert sent == [[streams.everyone_group()]]
    assert (await layer.receive(socket))["type"] == streams.ACCESS_MESSAGE


@pytest.mark.django_db(transaction=True)
async def test_membership_change_rings_the_member(world):
    layer = get_channel_layer()
    bob = world["bob"]
    channel = await layer.new_channel()
    await layer.group_add(streams.user_group(bob.pk), channel)

    await sync_to_async(bob.groups.add)(world["ops"])

    assert (await _next_message(channel))["kind"] == "tools_changed"


@pytest.mark.django_db(transaction=True)
async def test_tools_changed_reaches_an_open_session_socket(world, catalog):
    alice = world["alice"]
    spec = await AgentSpec.objects.aget(name="weather_sentiment")
    session = await sync_to_async(create_session)(user=alice, agent=spec)
    token = await sync_to_async(issue_token)(user=alice)
    socket = WebsocketCommunicator(
        application,
        f"/ws/sessions/{session.id}/",
        headers=[(b"authorization", f"Token {token}".encode())],
    )
    connected, _ = await socket.connect(timeout=5)
    assert connected

    weather = await Tool.objects.select_related("toolset").aget(
        full_name="weather_sentiment.get_weather_report"
    )
    await sync_to_async(grants.grant_tool)(target=weather, effect="deny", user=alice)

    assert await socket.receive_json_from(timeout=5) == {"type": "access_changed"}
    # A change for everyone (a toolset disabled) reaches it too, once.
    await sync_to_async(grants.update_toolset)(toolset=weather.toolset, enabled=False)
    assert await socket.receive_json_from(timeout=5) == {"type": "access_changed"}
    assert await socket.receive_nothing(timeout=0.3)
    await socket.disconnect()
