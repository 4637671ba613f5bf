"""Attacks on a notice's approve / reject links: each is refused with a page that
says why, and changes nothing."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from agents.models import Delivery, NoticeLink, Request
from agents.notices import links
from tests.agents.notices.conftest import make_request, team  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def approve(team, make_request) -> tuple[Request, str]:  # noqa: F811
    """A pending approval and carol's approve link's path."""
    request = make_request()
    delivery = Delivery.objects.create(
        request=request, channel="mail", recipient=team["carol"], address="c@x"
    )
    url = links.issue(delivery=delivery).approve
    return request, url.removeprefix("http://localhost:8000")


def as_user(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def unchanged(request: Request) -> bool:
    request.refresh_from_db()
    used = NoticeLink.objects.filter(used_at__isnull=False).exists()
    return request.status == "pending" and request.answered_by is None and not used


@pytest.mark.parametrize(
    "token",
    [
        "A" * 43,  # the right shape, never sent
        "A" * 42,
        "A" * 44,
        "../../admin",
        "%2e%2e",
        "é" * 43,
    ],
)
def test_a_forged_link_is_refused(team, approve, token):  # noqa: F811
    request, _ = approve

    page = as_user(team["carol"]).post(f"/notices/links/{token}/")

    assert page.status_code == 404
    assert unchanged(request)


def test_a_link_with_one_character_changed_is_refused(team, approve):  # noqa: F811
    request, path = approve
    token = path.split("/")[-2]
    forged = token[:-1] + ("A" if token[-1] != "A" else "B")

    page = as_user(team["carol"]).post(f"/notices/links/{forged}/")

    assert page.status_code == 404
    assert "not one Toolcrib sent" in page.content.decode()
    assert unchanged(request)


def test_another_approver_cannot_use_carols_link(team, approve):  # noqa: F811
    request, path = approve

    for person in ("dave", "erin", "alice"):  # a member, staff, the requester
        client = as_user(team[person])
        assert client.get(path).status_code == 403
        page = client.post(path)
        assert page.status_code == 403
        assert "sent to another person" in page.content.decode()
    assert unchanged(request)


def test_an_approver_no_longer_in_the_group_is_refused(team, approve):  # noqa: F811
    request, path = approve
    team["carol"].groups.clear()

    page = as_user(team["carol"]).post(path)

    assert page.status_code == 403
    assert "no longer decide" in page.content.decode()
    assert unchanged(request)


def test_an_approver_switched_off_is_refused_even_without_sign_in(
    team,  # noqa: F811
    approve,
    settings,
):
    settings.TOOLCRIB_NOTICE_LINKS_SIGN_IN = False
    request, path = approve
    team["carol"].is_active = False
    team["carol"].save()

    page = Client().post(path)

    assert page.status_code == 403
    assert unchanged(request)


def test_an_expired_link_is_refused(team, approve):  # noqa: F811
    request, path = approve
    NoticeLink.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    assert as_user(team["carol"]).post(path).status_code == 410
    assert unchanged(request)


def test_a_reused_link_is_refused(team, approve):  # noqa: F811
    request, path = approve
    carol = as_user(team["carol"])
    assert carol.post(path).status_code == 200
    request.refresh_from_db()
    answered_at = request.answered_at

    assert carol.post(path).status_code == 409
    request.refresh_from_db()
    assert request.answered_at == answered_at


def test_opening_a_link_never_decides_it(team, approve):  # noqa: F811
    """Mail scanners and link previews open links: GET and HEAD change nothing."""
    request, path = approve
    carol = as_user(team["carol"])

    assert carol.get(path).status_code == 200
    assert carol.head(path).status_code in (200, 405)
    assert carol.put(path).status_code == 405
    assert unchanged(request)


def test_a_cross_site_post_without_the_form_token_is_refused(
    team,  # noqa: F811
    approve,
):
    request, path = approve
    client = Client(enforce_csrf_checks=True)
    client.force_login(team["carol"])

    assert client.post(path).status_code == 403
    assert unchanged(request)


def test_an_overlong_comment_is_refused(team, approve):  # noqa: F811
    request, path = approve

    page = as_user(team["carol"]).post(path, {"comment": "x" * 2001})

    assert page.status_code == 400
    assert unchanged(request)


def test_only_a_tokens_digest_is_stored(team, approve):  # noqa: F811
    _, path = approve
    token = path.split("/")[-2]

    assert not NoticeLink.objects.filter(digest__contains=token).exists()
    assert all(len(link.digest) == 64 for link in NoticeLink.objects.all())
