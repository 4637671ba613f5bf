"""GET /api/tool-calls/?before=<id>: the audit list a page at a time, by key
(issue 43, "Day 100"): each call once, in the list's order, whatever the filters,
only calls the reader may see, at the same cost however deep the page."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db
CALLS = "/api/tool-calls/"


def make_calls(user, count, *, start=None, same_time=3, **fields):
    """`count` calls of `user`, a second apart, `same_time` of them sharing each
    started_at (a burst of parallel calls), made in no order of time."""
    start = start or timezone.now() - timedelta(days=1)
    rows = []
    for n in range(count):
        at = start + timedelta(seconds=n // same_time)
        rows.append(
            ToolCall(
                user=user,
                agent=fields.get("agent", "rocketeer"),
                tool_name="launch_rocket",
                tool_full_name="rocketeer.launch_rocket",
                status=fields.get("status", "ok"),
                call_id=f"{user.username}-{n}",
                started_at=at,
                finished_at=at,
            )
        )
    # Ids out of step with time: a later id is not always a later call.
    rows.reverse()
    rows = rows[1::2] + rows[::2]
    return ToolCall.objects.bulk_create(rows)


def read_all(client, query, *, limit):
    """Every page, following `before` as the audit page does: ids in order, and
    the size of each page."""
    ids, sizes, before = [], [], None
    while True:
        params = {**query, "limit": limit}
        if before is not None:
            params["before"] = before
        response = client.get(CALLS, params)
        assert response.status_code == 200, response.content
        page = response.json()
        assert isinstance(page, list)
        ids += [row["id"] for row in page]
        sizes.append(len(page))
        if len(page) < limit:
            return ids, sizes
        before = page[-1]["id"]


def newest_first(calls):
    return list(calls.order_by("-started_at", "-id").values_list("id", flat=True))


def test_paging_by_before_reads_250_calls_each_once_in_order(staff, alice, api_for):
    make_calls(alice, 250)

    ids, sizes = read_all(api_for(staff), {}, limit=100)

    assert sizes == [100, 100, 50]
    assert ids == newest_first(ToolCall.objects.all())
    assert len(set(ids)) == 250


def test_paging_keeps_to_every_filter_combined(staff, alice, bob, api_for):
    since = timezone.now() - timedelta(days=2)
    make_calls(alice, 250, status="error")
    make_calls(alice, 40, status="ok")
    make_calls(alice, 30, status="error", agent="weather_sentiment")
    make_calls(bob, 60, status="error")
    make_calls(alice, 20, status="error", start=since - timedelta(days=1))
    query = {
        "user": "alice",
        "status": "error",
        "agent": "rocketeer",
        "tool": "rocketeer.launch_rocket",
        "since": since.isoformat(),
    }
    wanted = ToolCall.objects.filter(
        user=alice, status="error", agent="rocketeer", started_at__gte=since
    )

    ids, sizes = read_all(api_for(staff), query, limit=100)

    assert sizes == [100, 100, 50]
    assert ids == newest_first(wanted)


def test_a_user_pages_through_her_own_calls_and_never_anothers(alice, bob, api_for):
    start = timezone.now() - timedelta(hours=5)
    make_calls(alice, 120, start=start)
    make_calls(bob, 120, start=start)  # the same times, ids between hers
    mine = newest_first(ToolCall.objects.filter(user=alice))

    ids, sizes = read_all(api_for(alice), {}, limit=50)
    by_filter, _ = read_all(api_for(alice), {"user": "bob"}, limit=50)

    assert ids == mine
    assert sizes == [50, 50, 20]
    assert by_filter == []


def test_another_users_call_is_no_cursor(alice, bob, api_for):
    [hers] = make_calls(alice, 1)
    [his] = make_calls(bob, 1)

    refused = api_for(alice).get(CALLS, {"before": his.pk})
    missing = api_for(alice).get(CALLS, {"before": his.pk + 1000})

    assert refused.status_code == missing.status_code == 400
    assert refused.json() == missing.json()
    assert list(refused.json()) == ["before"]
    assert api_for(alice).get(CALLS, {"before": hers.pk}).json() == []


@pytest.mark.parametrize(
    "before",
    ["abc", "-1", "0", "1.5", "99999999999999999999", "٣", "²", "1e3", " 1"],
)
@pytest.mark.parametrize("format_", ["json", "csv"])
def test_a_bad_cursor_is_a_400_on_before(staff, alice, api_for, before, format_):
    make_calls(alice, 3)

    response = api_for(staff).get(CALLS, {"before": before, "format": format_})

    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert list(response.json()) == ["before"]


def test_a_blank_cursor_is_the_first_page(staff, alice, api_for):
    make_calls(alice, 3)

    rows = api_for(staff).get(CALLS, {"before": ""}).json()

    assert [row["id"] for row in rows] == newest_first(ToolCall.objects.all())


def test_an_export_resumes_after_a_cursor(staff, alice, api_for):
    make_calls(alice, 30)
    order = newest_first(ToolCall.objects.all())

    response = api_for(staff).get(CALLS, {"format": "jsonl", "before": order[9]})

    lines = response.getvalue().decode().splitlines()
    assert [json.loads(line)["id"] for line in lines] == order[10:]


@pytest.mark.parametrize("count", [150, 600])
def test_a_deep_page_costs_one_query_more_than_the_first(
    staff, alice, api_for, django_assert_num_queries, count
):
    make_calls(alice, count)
    client = api_for(staff)
    first = client.get(CALLS, {"limit": 100}).json()
    deep = newest_first(ToolCall.objects.all())[-120]

    # The token (2), the page (1); by `before`, the cursor's call (1) too.
    with django_assert_num_queries(3):
        client.get(CALLS, {"limit": 100, "user": "alice"})
    with django_assert_num_queries(4):
        page = client.get(CALLS, {"limit": 100, "before": deep, "user": "alice"})

    assert len(first) == 100
    assert len(page.json()) == 100
