"""Who is told of a new request, by which channel: the people who may answer it,
as their preferences say."""

import pytest

from agents.models import Delivery, NoticePreference, Request
from agents.notices.enqueue import enqueue
from agents.notices.recipients import recipients
from agents.requests import rules
from tests.agents.notices.conftest import make_destination

pytestmark = pytest.mark.django_db


@pytest.fixture
def mail_on(settings):
    settings.EMAIL_HOST = "mail.example.com"


def told(request: Request, channel: str = "mail") -> set[str]:
    rows = Delivery.objects.filter(request=request, channel=channel)
    return {row.address for row in rows}


def test_an_approval_of_a_group_is_mailed_to_its_members_not_the_requester(
    mail_on, make_request
):
    request = make_request()

    enqueue([request])

    assert told(request) == {"carol@example.com", "dave@example.com"}
    assert all(d.status == "queued" for d in Delivery.objects.all())


def test_everyone_told_may_answer_and_staff_outside_the_group_are_not_told(
    make_request, team
):
    request = make_request()

    found = recipients(request)

    assert {u.username for u in found} == {"carol", "dave"}
    assert all(rules.may_answer(user=u, request=request) for u in found)
    assert rules.may_answer(user=team["erin"], request=request)  # may, is not told


def test_a_requester_who_may_decide_herself_is_told_too(mail_on, make_request):
    request = make_request(self_approval=True)

    enqueue([request])

    assert told(request) == {
        "alice@example.com",
        "carol@example.com",
        "dave@example.com",
    }


def test_an_ungrouped_approval_is_mailed_to_its_requester(mail_on, make_request):
    request = make_request(answer_group="")

    enqueue([request])

    assert told(request) == {"alice@example.com"}


def test_a_credential_request_is_not_mailed_unless_its_requester_asks(
    mail_on, make_request, team
):
    quiet = make_request(kind=Request.Kind.CREDENTIAL, answer_group="")
    enqueue([quiet])
    NoticePreference.objects.create(
        user=team["alice"], kind="credential", mail=True, webhook=False
    )
    asked = make_request(kind=Request.Kind.CREDENTIAL, answer_group="")

    enqueue([asked])

    assert told(quiet) == set()
    assert told(asked) == {"alice@example.com"}


def test_a_member_who_turned_approval_mail_off_gets_none(mail_on, make_request, team):
    NoticePreference.objects.create(
        user=team["carol"], kind="approval", mail=False, webhook=True
    )
    request = make_request()

    enqueue([request])

    assert told(request) == {"dave@example.com"}


def test_no_mail_without_an_smtp_server_or_an_address(
    mail_on, settings, make_request, team
):
    team["dave"].email = ""
    team["dave"].save()
    request = make_request()
    enqueue([request])
    settings.EMAIL_HOST = ""
    unmailed = make_request()

    enqueue([unmailed])

    assert told(request) == {"carol@example.com"}
    assert told(unmailed) == set()


def test_an_inactive_member_is_not_told(mail_on, make_request, team):
    team["dave"].is_active = False
    team["dave"].save()
    request = make_request()

    enqueue([request])

    assert told(request) == {"carol@example.com"}


def test_a_teams_destination_hears_its_groups_requests_of_its_kinds(make_request):
    make_destination(
        name="managers-channel",
        url="https://hooks.example.com/a",
        kinds=["approval"],
        group="managers",
        format="slack",
    )
    make_destination(
        name="auditors-channel",
        url="https://hooks.example.com/b",
        kinds=["approval"],
        group="auditors",
    )
    make_destination(name="calls", url="https://hooks.example.com/c", kinds=["call"])
    make_destination(
        name="off", url="https://hooks.example.com/d", kinds=["approval"], enabled=False
    )
    request = make_request()

    enqueue([request])

    assert told(request, "webhook") == {"managers-channel"}
    assert Delivery.objects.get().recipient is None


def test_a_persons_destination_follows_her_preferences(make_request, team):
    for name in ("carol", "dave", "alice"):
        make_destination(
            name=f"{name}-dm",
            url="https://hooks.example.com/x",
            kinds=["approval"],
            user=team[name],
        )
    NoticePreference.objects.create(
        user=team["dave"], kind="approval", mail=True, webhook=False
    )
    request = make_request()

    enqueue([request])

    # alice asked (not hers to decide), dave turned his webhook off.
    assert told(request, "webhook") == {"carol-dm"}
    assert Delivery.objects.get().recipient == team["carol"]


def test_queueing_notices_takes_a_few_queries_whatever_the_group_size(
    mail_on, make_request, make_user, django_assert_num_queries
):
    request = make_request()
    for number in range(10):
        user = make_user(f"member{number}")
        user.email = f"member{number}@example.com"
        user.save()
        user.groups.add(*user.groups.model.objects.filter(name="managers"))
    make_destination(
        name="channel", url="https://hooks.example.com/a", kinds=["approval"]
    )

    # destinations, members, preferences, the rows' INSERT (and its savepoint).
    with django_assert_num_queries(6):
        enqueue([request])

    assert Delivery.objects.count() == 13


def test_with_nothing_set_up_a_new_request_costs_one_query(
    make_request, django_assert_num_queries
):
    """The embedded default (no SMTP server, no destination): one look, nothing kept."""
    request = make_request()

    with django_assert_num_queries(1):
        assert enqueue([request]) == []
