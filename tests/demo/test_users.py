"""The demo's users and the groups its agents rely on (`manage.py demo_setup`)."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command

from agents.models import Request, Session
from agents.requests import rules
from demo.reimbursement import MANAGERS
from demo.users import ensure_demo_groups, ensure_demo_users

pytestmark = pytest.mark.django_db


def test_demo_setup_makes_bob_a_manager_for_the_reimbursement_demo(capsys):
    call_command("demo_setup")

    managers = Group.objects.get(name="managers")
    assert list(managers.user_set.values_list("username", flat=True)) == ["bob"]
    assert "managers: bob  (created)" in capsys.readouterr().out


def test_existing_demo_groups_keep_their_members():
    ensure_demo_users()
    Group.objects.create(name="managers")  # staff emptied it on purpose

    assert ensure_demo_groups() == [("managers", [], False)]


def test_bob_may_answer_alices_reimbursement_and_alice_may_not():
    ensure_demo_users()
    ensure_demo_groups()
    User = get_user_model()
    alice, bob = User.objects.get(username="alice"), User.objects.get(username="bob")
    session = Session.objects.create(
        id="s", adk_id="s", app_name="reimbursement", owner=alice
    )
    claim = Request.objects.create(
        kind="call", session=session, call_id="c", answer_group=MANAGERS
    )

    assert rules.may_answer(user=bob, request=claim)
    assert not rules.may_answer(user=alice, request=claim)
