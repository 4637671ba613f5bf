"""Webhook notices, received by a local HTTP server: the generic JSON (signed),
Slack's and Teams' message shapes; a failing or silent webhook is retried and
logged, and never holds anything up."""

import json
import time

import pytest

from agents.models import Delivery, WebhookDestination
from agents.notices.enqueue import enqueue
from agents.notices.sending import send_due, sign
from tests.agents.notices.conftest import make_destination

pytestmark = pytest.mark.django_db

SECRET = "a-shared-secret-of-the-team"


def destination(receiver, fmt: str, **fields) -> WebhookDestination:
    return make_destination(
        name=f"{fmt}-channel",
        url=receiver.url(f"/{fmt}"),
        format=fmt,
        kinds=["approval"],
        **fields,
    )


def test_the_generic_format_is_the_request_as_data_signed(receiver, make_request):
    destination(receiver, "generic", secret=SECRET)
    request = make_request(args={"to": "bob", "password": "hunter2"})
    enqueue([request])

    assert send_due() == 1

    ((path, headers, body),) = receiver.posts
    assert path == "/generic"
    assert headers["Content-Type"] == "application/json"
    expected = sign(secret=SECRET, timestamp=headers["X-Toolcrib-Timestamp"], body=body)
    assert headers["X-Toolcrib-Signature"] == expected
    assert abs(int(headers["X-Toolcrib-Timestamp"]) - time.time()) < 60
    sent = json.loads(body)
    assert sent["event"] == "request.new"
    assert sent["request"] | {"arguments": None} == {
        "id": request.pk,
        "kind": "approval",
        "title": "Approve a call of send_money",
        "reason": "The tool asks for a person's approval before each call.",
        "tool": "send_money",
        "requester": "alice",
        "agent": "claude-code",
        "arguments": None,
        "who_may_answer": "A member of managers or staff (not alice)",
        "expires_at": None,
    }
    assert "bob" in sent["request"]["arguments"]
    assert "hunter2" not in body.decode()
    # A team's channel: no decision links, which are one person's.
    assert sent["links"] == {"inbox": "http://localhost:8000/inbox/"}


def test_an_unsigned_generic_destination_sends_no_signature(receiver, make_request):
    destination(receiver, "generic")
    enqueue([make_request()])
    send_due()

    assert "X-Toolcrib-Signature" not in receiver.posts[0][1]


def test_slack_gets_text_and_blocks_with_markup_escaped(receiver, make_request):
    destination(receiver, "slack")
    enqueue([make_request(args={"note": "<!channel> & <http://evil|click>"})])
    send_due()

    sent = receiver.json()
    assert sent["text"] == "Approve a call of send_money, asked by alice"
    types = [block["type"] for block in sent["blocks"]]
    assert types == ["section", "section", "section", "actions"]
    fields = [f["text"] for f in sent["blocks"][1]["fields"]]
    assert "*Requester*\nalice" in fields
    arguments = sent["blocks"][2]["text"]["text"]
    assert "&lt;!channel&gt; &amp; &lt;http://evil|click&gt;" in arguments
    assert "<!channel>" not in json.dumps(sent)
    (button,) = sent["blocks"][3]["elements"]
    assert button["url"] == "http://localhost:8000/inbox/"


def test_teams_gets_an_adaptive_card(receiver, make_request):
    destination(receiver, "teams")
    enqueue([make_request()])
    send_due()

    sent = receiver.json()
    assert sent["type"] == "message"
    (attachment,) = sent["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert (card["type"], card["version"]) == ("AdaptiveCard", "1.4")
    assert card["body"][0]["text"] == "Approve a call of send_money"
    facts = {f["title"]: f["value"] for f in card["body"][2]["facts"]}
    assert facts["Requester"] == "alice" and facts["Tool"] == "send_money"
    assert card["actions"] == [
        {
            "type": "Action.OpenUrl",
            "title": "Open the inbox",
            "url": "http://localhost:8000/inbox/",
        }
    ]


def test_a_persons_own_destination_carries_her_decision_links(
    receiver, make_request, team
):
    destination(receiver, "slack", user=team["carol"])
    enqueue([make_request()])
    send_due()

    buttons = receiver.json()["blocks"][-1]["elements"]
    assert [b["text"]["text"] for b in buttons] == [
        "Approve…",
        "Reject…",
        "Open the inbox",
    ]
    assert [b.get("style") for b in buttons] == ["primary", "danger", None]
    assert buttons[0]["url"].startswith("http://localhost:8000/notices/links/")


def test_a_failing_webhook_is_retried_with_backoff_then_logged_failed(
    receiver, make_request, settings
):
    settings.TOOLCRIB_NOTICE_RETRY_SECONDS = 60
    receiver.status = 500
    destination(receiver, "generic")
    enqueue([make_request()])

    send_due()

    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("queued", 1)
    assert delivery.last_error == "The webhook answered HTTP 500."
    assert 55 < (delivery.next_attempt_at - delivery.created_at).total_seconds() < 65
    assert send_due() == 0 and len(receiver.posts) == 1  # not yet due
    for wait in (240,):  # the second retry waits four times longer
        Delivery.objects.update(next_attempt_at=delivery.created_at)
        send_due()
        delivery.refresh_from_db()
        assert delivery.attempts == 2
        assert (
            wait - 5 < (delivery.next_attempt_at - delivery.created_at).total_seconds()
        )
    Delivery.objects.update(next_attempt_at=delivery.created_at)
    send_due()

    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, len(receiver.posts)) == ("failed", 3, 3)
    assert delivery.next_attempt_at is None


def test_a_webhook_that_recovers_is_sent_on_retry(receiver, make_request, settings):
    settings.TOOLCRIB_NOTICE_RETRY_SECONDS = 0
    receiver.status = 503
    destination(receiver, "teams")
    enqueue([make_request()])
    send_due()
    receiver.status = 200

    assert send_due() == 1

    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("sent", 2)
    assert delivery.last_error == ""


def test_a_silent_webhook_times_out_is_logged_and_retried(
    receiver, make_request, settings
):
    settings.TOOLCRIB_NOTICE_WEBHOOK_TIMEOUT = 0.3
    receiver.delay = 2
    destination(receiver, "generic")
    enqueue([make_request()])

    started = time.monotonic()
    assert send_due() == 0
    assert time.monotonic() - started < 1.5

    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("queued", 1)
    assert delivery.last_error == "The webhook did not answer within 0.3 s."


def test_an_unreachable_webhook_is_logged_without_its_address(make_request):
    make_destination(
        name="gone",
        url="http://127.0.0.1:9/T000/B000/XXXXsecretXXXX",
        kinds=["approval"],
    )
    enqueue([make_request()])
    send_due()

    delivery = Delivery.objects.get()
    assert delivery.last_error == "The webhook could not be reached (ConnectError)."
    assert "secret" not in delivery.last_error
