"""A notice's approve / reject links: opening one shows a page and decides
nothing; its form decides, once, as the approver it was sent to."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from agents.answers.answer import answer_by_id
from agents.models import Delivery, NoticeLink, Request
from agents.notices import links

pytestmark = pytest.mark.django_db


def links_for(user, request: Request) -> links.Links:
    delivery = Delivery.objects.create(
        request=request, channel="mail", recipient=user, address=user.email
    )
    return links.issue(delivery=delivery)


def path_of(url: str) -> str:
    return url.removeprefix("http://localhost:8000")


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def carols(team, make_request):
    request = make_request()
    return request, links_for(team["carol"], request)


def test_opening_a_link_shows_the_call_and_decides_nothing(team, carols):
    request, found = carols

    page = signed_in(team["carol"]).get(path_of(found.approve))

    assert page.status_code == 200
    text = page.content.decode()
    assert "Approve this call?" in text and "send_money" in text and "alice" in text
    assert "Deciding as carol" in text
    assert page["Cache-Control"].startswith("max-age=0")
    assert page["Referrer-Policy"] == "no-referrer"
    request.refresh_from_db()
    assert request.status == "pending"


def test_the_forms_post_approves_as_the_approver_with_her_comment(team, carols):
    request, found = carols

    page = signed_in(team["carol"]).post(
        path_of(found.approve), {"comment": "fine, once"}
    )

    assert page.status_code == 200
    assert "approved by carol" in page.content.decode()
    request.refresh_from_db()
    assert (request.status, request.answered_by, request.comment) == (
        "approved",
        team["carol"],
        "fine, once",
    )


def test_the_reject_link_rejects(team, carols):
    request, found = carols

    signed_in(team["carol"]).post(path_of(found.reject))

    request.refresh_from_db()
    assert (request.status, request.answered_by) == ("rejected", team["carol"])


def test_a_link_decides_once_and_its_twin_is_used_with_it(team, carols):
    request, found = carols
    carol = signed_in(team["carol"])
    carol.post(path_of(found.approve))

    again = carol.post(path_of(found.approve))
    twin = carol.post(path_of(found.reject))

    assert (again.status_code, twin.status_code) == (409, 409)
    assert "used already" in twin.content.decode()
    request.refresh_from_db()
    assert request.status == "approved"


def test_a_link_of_a_request_decided_elsewhere_is_refused(team, carols):
    request, found = carols
    answer_by_id(user=team["dave"], request_id=request.pk, answer={"approved": False})

    page = signed_in(team["carol"]).post(path_of(found.approve))

    assert page.status_code == 409
    assert "this request is rejected" in page.content.decode()
    request.refresh_from_db()
    assert (request.status, request.answered_by) == ("rejected", team["dave"])


def test_a_link_expires_with_its_request(team, make_request):
    request = make_request(expires_at=timezone.now() + timedelta(minutes=5))
    found = links_for(team["carol"], request)
    assert {link.expires_at for link in NoticeLink.objects.all()} == {
        request.expires_at
    }
    NoticeLink.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    page = signed_in(team["carol"]).post(path_of(found.approve))

    assert page.status_code == 410
    assert "expired" in page.content.decode()
    request.refresh_from_db()
    assert request.status == "pending"


def test_a_link_of_a_request_with_no_time_lives_at_most_its_max_age(
    team, make_request, settings
):
    settings.TOOLCRIB_NOTICE_LINK_MAX_AGE = 3600
    links_for(team["carol"], make_request())

    for link in NoticeLink.objects.all():
        left = (link.expires_at - timezone.now()).total_seconds()
        assert 3590 < left <= 3600


def test_signing_in_is_asked_first_and_brings_her_back(carols):
    _, found = carols

    page = Client().get(path_of(found.approve))

    assert page.status_code == 302
    assert page["Location"] == f"/login/?next={path_of(found.approve)}"


def test_with_sign_in_off_the_link_alone_decides_as_its_approver(
    team, carols, settings
):
    settings.TOOLCRIB_NOTICE_LINKS_SIGN_IN = False
    request, found = carols
    anonymous = Client()

    shown = anonymous.get(path_of(found.approve))
    decided = anonymous.post(path_of(found.approve))

    assert (shown.status_code, decided.status_code) == (200, 200)
    request.refresh_from_db()
    assert (request.status, request.answered_by) == ("approved", team["carol"])
