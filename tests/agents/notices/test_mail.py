"""Mail notices, received by a real SMTP server: the right people, the request in
words, links of their own, nothing secret, nothing unescaped."""

import re

import pytest

from agents.models import Delivery, NoticeLink
from agents.notices.enqueue import enqueue
from agents.notices.sending import send_due

pytestmark = pytest.mark.django_db

LINK = re.compile(r"http://localhost:8000/notices/links/[A-Za-z0-9_-]{43}/")


def mails_by_address(smtp) -> dict:
    return {to[0]: mail for to, mail in smtp.mails}


def text_of(mail) -> str:
    return mail.get_body(preferencelist=("plain",)).get_content()


def html_of(mail) -> str:
    return mail.get_body(preferencelist=("html",)).get_content()


def test_each_member_receives_one_mail_naming_the_call(smtp, make_request):
    enqueue([make_request()])

    assert send_due() == 2

    mails = mails_by_address(smtp)
    assert set(mails) == {"carol@example.com", "dave@example.com"}
    mail = mails["carol@example.com"]
    assert mail["To"] == "carol@example.com"
    assert mail["Subject"] == "Approve a call of send_money, asked by alice"
    text = text_of(mail)
    for words in ("send_money", "alice", "claude-code", '"amount": 500', "managers"):
        assert words in text
    assert {d.status for d in Delivery.objects.all()} == {"sent"}
    assert all(d.attempts == 1 and d.sent_at for d in Delivery.objects.all())


def test_each_approver_gets_her_own_approve_and_reject_links(smtp, make_request, team):
    request = make_request()
    enqueue([request])
    send_due()

    mails = mails_by_address(smtp)
    carols = LINK.findall(text_of(mails["carol@example.com"]))
    daves = LINK.findall(text_of(mails["dave@example.com"]))

    assert len(carols) == len(daves) == 2
    assert set(carols).isdisjoint(daves)
    assert set(LINK.findall(html_of(mails["carol@example.com"]))) == set(carols)
    links = NoticeLink.objects.filter(request=request)
    assert {(link.user.username, link.approved) for link in links} == {
        ("carol", True),
        ("carol", False),
        ("dave", True),
        ("dave", False),
    }
    assert "http://localhost:8000/inbox/" in text_of(mails["carol@example.com"])


def test_a_credential_request_has_no_decision_links(smtp, make_request, team):
    from agents.models import NoticePreference

    NoticePreference.objects.create(
        user=team["alice"], kind="credential", mail=True, webhook=False
    )
    enqueue([make_request(kind="credential", answer_group="", args={})])
    send_due()

    ((to, mail),) = smtp.mails
    assert to == ["alice@example.com"]
    assert mail["Subject"] == "Give a credential for send_money, asked by alice"
    assert not LINK.findall(text_of(mail))


def test_a_secret_argument_never_reaches_a_mail(smtp, make_request):
    enqueue([make_request(args={"to": "bob", "api_key": "s3cr3t-v4lue"})])
    send_due()

    for _, mail in smtp.mails:
        assert "s3cr3t-v4lue" not in mail.as_string()
        assert "bob" in text_of(mail)


def test_markup_in_the_arguments_is_escaped_in_the_html(smtp, make_request):
    enqueue([make_request(args={"note": "<script>alert(1)</script>"})])
    send_due()

    html = html_of(smtp.mails[0][1])
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert(1)</script>" in text_of(smtp.mails[0][1])


def test_a_notice_of_a_request_decided_before_it_went_is_skipped(smtp, make_request):
    request = make_request()
    enqueue([request])
    request.status = "approved"
    request.save()

    assert send_due() == 0

    assert smtp.mails == []
    assert {d.status for d in Delivery.objects.all()} == {"skipped"}


def test_a_mail_server_that_refuses_is_retried_then_failed(settings, make_request):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = 9  # discard: nothing listens
    settings.TOOLCRIB_NOTICE_RETRY_SECONDS = 0
    enqueue([make_request(answer_group="")])

    for _ in range(3):
        assert send_due() == 0

    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("failed", 3)
    assert delivery.last_error.startswith("The mail server refused or failed")
    assert send_due() == 0  # nothing is tried a fourth time
    assert Delivery.objects.get().attempts == 3


def test_an_address_no_mail_can_go_to_is_logged_failed_not_stuck(
    smtp, make_request, team, settings
):
    settings.TOOLCRIB_NOTICE_ATTEMPTS = 1
    team["alice"].email = "alice@example.com\nBcc: everyone@example.com"
    team["alice"].save()
    enqueue([make_request(answer_group="")])

    assert send_due() == 0

    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.last_error) == (
        "failed",
        "The mail address is not one a mail can go to.",
    )
    assert smtp.mails == []
