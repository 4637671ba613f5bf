"""Groups: staff create, rename, fill and delete them; access and sockets follow."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.contrib.auth.models import Group

from agents.models import Request, Session
from agents.timeline import streams
from toolsets import access, grants, groups
from toolsets.models import Grant, Tool, Toolset

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(make_user):
    alice, bob = make_user("alice"), make_user("bob")
    support = Group.objects.create(name="support")
    support.user_set.add(alice)
    ts = Toolset.objects.create(name="ts", default_policy="granted_only")
    tool = Tool.objects.create(toolset=ts, name="t1", full_name="ts.t1")
    grants.grant_tool(target=ts, effect="allow", group=support)
    return {"alice": alice, "bob": bob, "support": support, "tool": tool}


def test_create_group_refuses_a_taken_name_whatever_its_case(world):
    with pytest.raises(groups.GroupNameTaken) as refused:
        groups.create_group(name="Support")

    assert refused.value.field == "name"
    assert Group.objects.filter(name__iexact="support").count() == 1


def test_a_member_added_gets_the_groups_tools_and_loses_them_when_removed(world):
    bob, support = world["bob"], world["support"]
    assert not access.is_allowed(user_id=bob.pk, tool="ts.t1")

    assert groups.add_member(group=support, user=bob) is True
    assert access.is_allowed(user_id=bob.pk, tool="ts.t1")
    assert groups.add_member(group=support, user=bob) is False

    groups.remove_member(group=support, user=bob)
    assert not access.is_allowed(user_id=bob.pk, tool="ts.t1")
    with pytest.raises(groups.NotAMember):
        groups.remove_member(group=support, user=bob)


def test_rename_keeps_grants_and_moves_waiting_requests(world):
    alice = world["alice"]
    session = Session.objects.create(id="s", adk_id="s", app_name="x", owner=alice)
    waiting = Request.objects.create(
        session=session, kind="approval", call_id="c1", answer_group="support"
    )
    closed = Request.objects.create(
        session=session,
        kind="approval",
        call_id="c2",
        answer_group="support",
        status=Request.Status.APPROVED,
    )

    groups.rename_group(group=world["support"], name="helpdesk")

    assert access.is_allowed(user_id=alice.pk, tool="ts.t1")
    waiting.refresh_from_db()
    closed.refresh_from_db()
    assert waiting.answer_group == "helpdesk"
    assert closed.answer_group == "support"  # history keeps the name it had


def test_rename_to_another_groups_name_is_refused(world):
    Group.objects.create(name="billing")

    with pytest.raises(groups.GroupNameTaken):
        groups.rename_group(group=world["support"], name="BILLING")

    world["support"].refresh_from_db()
    assert world["support"].name == "support"


def test_delete_group_takes_its_grants_and_its_members_access(world):
    alice = world["alice"]

    groups.delete_group(group=world["support"])

    assert not Grant.objects.exists()
    assert not access.is_allowed(user_id=alice.pk, tool="ts.t1")


def test_groups_with_counts_counts_members(world):
    world["support"].user_set.add(world["bob"])
    Group.objects.create(name="empty")

    counted = {group.name: group.member_count for group in groups.groups_with_counts()}

    assert counted == {"empty": 0, "support": 2}


def test_provider_managed_groups_follow_the_patterns_only_with_a_provider(settings):
    settings.TOOLCRIB_OIDC_ISSUER = ""
    assert not groups.is_provider_managed("support")

    settings.TOOLCRIB_OIDC_ISSUER = "https://id.example.com"
    settings.TOOLCRIB_OIDC_MANAGED_GROUPS = ["corp-*", "managers"]
    assert groups.is_provider_managed("corp-support")
    assert groups.is_provider_managed("managers")
    assert not groups.is_provider_managed("local-team")


async def _next(channel: str) -> dict:
    return await asyncio.wait_for(get_channel_layer().receive(channel), timeout=5)


async def _listen(user) -> str:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(streams.user_group(user.pk), channel)
    return channel


@pytest.mark.django_db(transaction=True)
async def test_adding_and_removing_a_member_rings_her_sockets(world):
    bob, support = world["bob"], world["support"]
    channel = await _listen(bob)

    await sync_to_async(groups.add_member)(group=support, user=bob)
    assert (await _next(channel))["kind"] == "tools_changed"

    await sync_to_async(groups.remove_member)(group=support, user=bob)
    assert (await _next(channel))["kind"] == "tools_changed"


@pytest.mark.django_db(transaction=True)
async def test_deleting_a_group_rings_its_members_sockets(world):
    channel = await _listen(world["alice"])

    await sync_to_async(groups.delete_group)(group=world["support"])

    assert (await _next(channel))["kind"] == "tools_changed"
