"""End to end: a turn pauses for an approval, its approvers are mailed by a real
SMTP server off the turn's path, and the mail's link decides it, resuming the
agent."""

import re
import time

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from agents.models import Delivery, Request
from tests.agents.requests.conftest import agents, paused  # noqa: F401

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("agents"),
]

LINK = re.compile(r"http://localhost:8000(/notices/links/[A-Za-z0-9_-]{43}/)")


def wait_for(predicate, seconds: float = 10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_a_paused_turns_approvers_are_mailed_and_a_link_resumes_it(smtp, make_user):
    owner, auditor = make_user("alice"), make_user("carol")
    auditor.email = "carol@example.com"
    auditor.save()
    owner.email = "alice@example.com"
    owner.save()
    Group.objects.create(name="auditors").user_set.add(auditor)

    _, request = paused(owner, "audited_teller")

    wait_for(lambda: smtp.mails)
    ((to, mail),) = smtp.mails
    assert to == ["carol@example.com"]
    assert mail["Subject"].startswith("Approve a call of ")
    text = mail.get_body(preferencelist=("plain",)).get_content()
    approve = LINK.findall(text)[0]
    wait_for(lambda: Delivery.objects.filter(status="sent").exists())

    client = Client()
    client.force_login(auditor)
    assert client.get(approve).status_code == 200
    decided = client.post(approve)

    assert decided.status_code == 200
    request = Request.objects.get(pk=request.pk)
    assert (request.status, request.answered_by) == ("approved", auditor)
    assert request.answer_run_id is not None


def test_an_approval_with_no_answer_group_mails_its_requester(make_user, smtp):
    owner = make_user("alice")
    owner.email = "alice@example.com"
    owner.save()

    paused(owner, "teller")

    wait_for(lambda: smtp.mails)
    assert [to for to, _ in smtp.mails] == [["alice@example.com"]]
