"""The Overview and the audit tell approvals, rejections and waiting calls apart
from failures: a healthy day with approvals counts no failure. The numbers come
aggregated from the server; the page fetches no rows.

olga, a user of her own (a non-staff Overview shows only her calls), wires money
with the demo bank three times: she approves one, rejects one, and leaves one
waiting; the weather agent runs once besides.
"""

import subprocess
import sys

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

from tests.live.server import ROOT

pytestmark = pytest.mark.browser

MAKE_OLGA = (
    "from django.contrib.auth.models import User; "
    "User.objects.filter(username='olga').exists() "
    "or User.objects.create_user('olga', password='olga')"
)


@pytest.fixture(scope="module")
def olga(live_env) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", MAKE_OLGA],
        cwd=ROOT,
        env=dict(live_env),
        check=True,
        capture_output=True,
    )


def say(client: httpx.Client, agent: str, text: str) -> tuple[str, dict]:
    session = client.post("/api/sessions/", json={"agent": agent}).json()["id"]
    said = client.post(
        f"/api/sessions/{session}/messages/?wait=1", json={"text": text}, timeout=60
    )
    assert said.status_code == 200, said.text
    return session, said.json()


def wire_and_decide(client: httpx.Client, approved: bool | None) -> None:
    session, run = say(client, "bank", 'wire 500 to "bob"')
    assert (run["status"], run["waiting_for"]) == ("waiting", "approval")
    if approved is None:
        return
    [approval] = client.get(f"/api/approvals/?session={session}").json()
    decided = client.post(
        f"/api/approvals/{approval['id']}/decide/?wait=1",
        json={"approved": approved},
        timeout=60,
    )
    assert decided.status_code == 200, decided.text
    assert decided.json()["resumes"] == run["id"]


def kpi(page: Page, key: str) -> Locator:
    return page.locator(f'.kpi[data-kpi="{key}"] .value')


def test_a_healthy_day_with_approvals_counts_no_failure(olga, api, sign_in, shoot):
    client = api("olga")
    for approved in (True, False, None):
        wire_and_decide(client, approved)
    say(client, "weather_sentiment", "weather in london?")

    page = sign_in("olga")
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto("/overview/")

    expect(kpi(page, "failed")).to_have_text("0%")
    expect(kpi(page, "calls")).to_have_text("4")
    expect(kpi(page, "approved")).to_have_text("1")
    expect(kpi(page, "rejected")).to_have_text("1")
    expect(kpi(page, "awaiting")).to_have_text("1")
    expect(kpi(page, "denied")).to_have_text("0")
    expect(page.locator("#chart-calls .legend-row")).to_contain_text(
        "held for approval"
    )
    expect(kpi(page, "tools")).to_have_text("2")
    expect(page.locator("#chart-slow li")).to_have_count(2)
    expect(page.locator("#chart-slow")).to_contain_text("wire_money")
    expect(page.locator("#chart-denied")).to_contain_text("No denials")
    shoot(page, "overview-approvals-no-failures")
    # The server aggregates: the page never pulls the rows themselves.
    calls = [url for url in requests if "/api/tool-calls/" in url]
    assert calls and all("/api/tool-calls/summary/?" in url for url in calls), calls
    assert not [url for url in requests if "limit=" in url], requests

    admin = sign_in("admin")
    admin.goto("/staff/audit/?user=olga&status=approved")
    row = admin.locator("#audit-table tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator("td.decided")).to_contain_text("by olga")
    expect(row).to_contain_text("wire_money")
    shoot(admin, "audit-approved-by-olga")
