"""GET /api/sessions/{id}/events/?before=: a page that opens at the latest events and
pages back as its reader scrolls up."""

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

UNICODE_DIGIT = "%C2%B2"  # "²"
TOO_BIG = "99999999999999999999999"


@pytest.fixture
def two_turns(demo_agents, alice, start_session, say) -> str:
    session = start_session(alice, "weather_sentiment")
    say(alice, session, "weather in paris")
    say(alice, session, "weather in london")  # 12 events in all
    return session


def seqs(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [frame["seq"] for frame in response.json()]


def test_before_end_reads_the_newest_events_in_seq_order(alice, api_for, two_turns):
    client = api_for(alice)

    newest = client.get(f"/api/sessions/{two_turns}/events/?before=end&limit=5")

    assert seqs(newest) == [8, 9, 10, 11, 12]


def test_paging_back_reads_every_event_once_in_order(alice, api_for, two_turns):
    client = api_for(alice)
    pages, before = [], "end"
    while True:
        page = seqs(
            client.get(f"/api/sessions/{two_turns}/events/?before={before}&limit=5")
        )
        if not page:
            break
        pages.insert(0, page)
        before = page[0]

    assert pages == [[1, 2], [3, 4, 5, 6, 7], [8, 9, 10, 11, 12]]


def test_before_with_after_reads_between_them(alice, api_for, two_turns):
    response = api_for(alice).get(
        f"/api/sessions/{two_turns}/events/?after=2&before=9&limit=3"
    )

    assert seqs(response) == [6, 7, 8]


@pytest.mark.parametrize(
    "value", ["abc", "-1", "1.5", UNICODE_DIGIT, TOO_BIG, "END", "newest"]
)
def test_a_bad_before_is_400(alice, api_for, demo_agents, start_session, value):
    session = start_session(alice, "weather_sentiment")

    response = api_for(alice).get(f"/api/sessions/{session}/events/?before={value}")

    assert response.status_code == 400, response.content
    assert "before" in response.json()


@pytest.mark.parametrize("before", ["end", "3"])
def test_another_users_session_pages_are_404(alice, bob, api_for, two_turns, before):
    response = api_for(bob).get(f"/api/sessions/{two_turns}/events/?before={before}")

    assert response.status_code == 404
