"""The audit page reads a year of calls a page at a time (issue 43, "Day 100").

It opens on the newest 100 calls; Load more appends the next 100 older ones (the
API's `before` cursor), and is gone once a page comes back short; new filters
start again from the top. paige, a user of her own, has 250 calls, three to a
second in bursts, so ties in time are crossed too.
"""

import subprocess
import sys

import pytest
from playwright.sync_api import Page, expect

from tests.live.server import ROOT

pytestmark = pytest.mark.browser

CALLS = 250
MAKE_CALLS = f"""
from datetime import timedelta
from django.contrib.auth.models import User
from django.utils import timezone
from toolsets.models import ToolCall
paige = User.objects.filter(username="paige").first() or User.objects.create_user(
    "paige", password="paige"
)
ToolCall.objects.filter(user=paige).delete()
start = timezone.now() - timedelta(days=300)
ToolCall.objects.bulk_create(
    ToolCall(
        user=paige,
        agent="rocketeer",
        tool_name=f"step{{n:03d}}",
        tool_full_name=f"kit.step{{n:03d}}",
        status="error" if n % 5 == 0 else "ok",
        started_at=start + timedelta(seconds=n // 3),
        finished_at=start + timedelta(seconds=n // 3),
    )
    # Made newest first, so a later id is not a later call.
    for n in reversed(range({CALLS}))
)
"""


@pytest.fixture(scope="module")
def paige_calls(live_env, server) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", MAKE_CALLS],
        cwd=ROOT,
        env=dict(live_env),
        check=True,
        capture_output=True,
    )


def tools_shown(page: Page) -> list[str]:
    return page.locator("#audit-table tbody td.tool code").all_inner_texts()


def newest_first(count: int) -> list[str]:
    """The tools of the `count` newest calls: within a second, the later id first,
    which is the earlier step (they were made newest first)."""
    steps = sorted(range(CALLS), key=lambda n: (n // 3, -n), reverse=True)
    return [f"step{n:03d}" for n in steps[:count]]


def test_load_more_appends_older_calls_until_there_are_no_more(
    sign_in, paige_calls, screenshots
):
    page = sign_in("admin")
    page.goto("/staff/audit/?user=paige")
    rows = page.locator("#audit-table tbody tr")
    more = page.get_by_role("button", name="Load more")

    expect(rows).to_have_count(100)
    assert tools_shown(page) == newest_first(100)
    expect(page.locator("#audit")).to_contain_text("100 calls shown, newest first")
    more.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "audit-load-more.png"))

    more.click()
    expect(rows).to_have_count(200)
    assert tools_shown(page) == newest_first(200)
    expect(rows.nth(100)).to_be_focused()

    more.click()
    expect(rows).to_have_count(CALLS)
    assert tools_shown(page) == newest_first(CALLS)
    expect(more).to_be_hidden()
    expect(page.locator("#audit")).to_contain_text("250 calls shown: every one")
    page.locator(".audit-more").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "audit-load-more-end.png"))


def test_new_filters_start_again_from_the_top(sign_in, paige_calls):
    page = sign_in("admin")
    page.goto("/staff/audit/?user=paige")
    rows = page.locator("#audit-table tbody tr")
    page.get_by_role("button", name="Load more").click()
    expect(rows).to_have_count(200)

    page.select_option("select[name=status]", "error")
    page.get_by_role("button", name="Apply").click()

    expect(rows).to_have_count(CALLS // 5)
    expect(page.locator("#audit-table tbody tr[data-status='ok']")).to_have_count(0)
    errors = [tool for tool in newest_first(CALLS) if int(tool[4:]) % 5 == 0]
    assert tools_shown(page) == errors
    expect(page.get_by_role("button", name="Load more")).to_be_hidden()
