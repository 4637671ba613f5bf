"""Every page at 1280 and 390 px wide, as staff and as a user, with lived-in data:
nothing scrolls sideways, nothing is cut off (tests/browser/widths.py), and at phone
width every staff page is still reachable from the staff menu.

The data is what a busy deployment has: twenty sessions with long titles (one a
single long word), a user and a group with long names, a toolset and tools with long
names, audit rows with long names and arguments, an approval waiting, and events
on the firehose.

PAGES names every page of frontend/urls.py: a new page fails
test_every_page_is_in_the_list until it is added here.
"""

import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
from django.urls import get_resolver
from playwright.sync_api import Page, expect

from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.widths import assert_no_overflow, overflow_problems
from tests.live.server import ROOT

pytestmark = pytest.mark.browser

WIDTHS = {"desktop": DESKTOP, "phone": PHONE}
LONG_WORD = "Quarterly-reimbursement-reconciliation-for-the-northern-region-offices"
LONG_USER = "maximiliana.vandenberg-oosterhuis@example.org"
LONG_GROUP = "regional-finance-approvers-northern-europe-and-the-baltics"
LONG_TOOLSET = "enterprise_resource_planning_connector_for_finance"
LONG_TOOL = "reconcile_outstanding_supplier_invoices_against_purchase_orders"

# The long-named world, added to the live server's database once (idempotent).
SEED = f"""
from datetime import timedelta
from django.contrib.auth.models import Group, User
from django.utils import timezone
from toolsets.call_totals import create_call
from toolsets.models import Tool, ToolCall, Toolset

user = User.objects.filter(username={LONG_USER!r}).first()
if user is None:
    user = User.objects.create_user({LONG_USER!r}, password="long")
group, _ = Group.objects.get_or_create(name={LONG_GROUP!r})
group.user_set.add(user)
toolset, _ = Toolset.objects.get_or_create(
    name={LONG_TOOLSET!r},
    defaults={{"description": "Invoices, suppliers and purchase orders", "origin": "tests"}},
)
Tool.objects.get_or_create(
    full_name="{LONG_TOOLSET}.{LONG_TOOL}",
    defaults={{"toolset": toolset, "name": {LONG_TOOL!r}, "description": "Match them."}},
)
alice = User.objects.get(username="alice")
admin = User.objects.get(username="admin")
if not ToolCall.objects.filter(tool_name={LONG_TOOL!r}).exists():
    now = timezone.now()
    for index, (who, status) in enumerate(
        [(alice, "ok"), (user, "error"), (alice, "approved"), (user, "denied")]
    ):
        started = now - timedelta(minutes=index)
        create_call(
            user=who,
            session_id="",
            agent="accounts_payable_assistant_for_the_northern_region",
            adk_agent="invoice_matching_specialist_sub_agent",
            call_id=f"long-{{index}}",
            tool_name={LONG_TOOL!r},
            tool_full_name="{LONG_TOOLSET}.{LONG_TOOL}",
            args={{"supplier": {LONG_WORD!r}, "purchase_orders": list(range(40))}},
            result_summary='{{"matched": 38, "unmatched": ["PO-2026-000000001"]}}',
            status=status,
            access_rule=f"allowed by group {LONG_GROUP}: {LONG_TOOLSET}",
            decided_by=admin if status == "approved" else None,
            decided_at=now if status == "approved" else None,
            started_at=started,
            finished_at=started + timedelta(seconds=2),
            duration_ms=2000,
        )
"""


def seed(env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SEED],
        cwd=ROOT,
        env=dict(env),
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def world(server, live_env) -> Iterator[dict[str, str]]:
    """alice's twenty long-titled sessions, one that ran, one waiting for approval."""
    seed(live_env)
    token = server.token("alice", "alice")
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Token {token}"}, timeout=60
    ) as client:

        def session(agent: str, text: str | None = None, title: str = "") -> str:
            made = client.post("/api/sessions/", json={"agent": agent}).json()["id"]
            if text:
                said = client.post(
                    f"/api/sessions/{made}/messages/?wait=1", json={"text": text}
                )
                assert said.status_code == 200, said.text
            if title:
                renamed = client.patch(f"/api/sessions/{made}/", json={"title": title})
                assert renamed.status_code == 200, renamed.text
            return made

        for number in range(18):
            session(
                "weather_sentiment",
                title=(
                    LONG_WORD
                    if number == 0
                    else f"Planning the {number}th offsite: venues, travel, budget "
                    "and the agenda everyone agreed on after the long thread"
                ),
            )
        ran = session(
            "weather_sentiment",
            f"weather in london? and in {LONG_WORD}?",
            title=f"{LONG_WORD} and the weather",
        )
        waiting = session("bank", 'wire 500 to "bob"')
        prompt = client.post(
            "/api/prompts/",
            json={
                "command": "reconcile-" + "x" * 50,
                "title": LONG_WORD,
                "body": f"Reconcile {{{{supplier}}}} for {LONG_WORD} " * 5,
            },
        )
        assert prompt.status_code in (201, 400), prompt.text  # 400: seeded before
        shared = client.post(f"/api/sessions/{ran}/shares/", json={})
        assert shared.status_code == 201, shared.text
        evalset = client.post("/api/evalsets/", json={"name": f"{LONG_WORD}-{ran}"})
        assert evalset.status_code == 201, evalset.text
        set_id = evalset.json()["id"]
        case = client.post(
            f"/api/evalsets/{set_id}/cases/from-session/", json={"session": ran}
        )
        assert case.status_code == 201, case.text
        run_ids = []
        for _ in range(2):
            run = client.post(
                f"/api/evalsets/{set_id}/runs/", json={"agent": "weather_sentiment"}
            )
            assert run.status_code == 201, run.text
            run_ids.append(run.json()["id"])
        yield {
            "ran": ran,
            "waiting": waiting,
            "share": shared.json()["token"],
            "set": set_id,
            "runs": run_ids,
        }
        for approval in client.get(f"/api/approvals/?session={waiting}").json():
            client.post(
                f"/api/approvals/{approval['id']}/decide/", json={"approved": False}
            )


LIVE = '#live-status[data-status="live"]'
# Every page of frontend/urls.py: its path (from the world) and what shows once it
# has loaded what it shows; logout is a form's POST, not a page.
PAGES = {
    "home": (lambda w: "/", "#sessions li[data-session], #sessions .empty"),
    "session": (lambda w: f"/sessions/{w['ran']}/", ".artifact-list, #artifacts"),
    "inbox": (lambda w: "/inbox/", "#inbox-tabs"),
    "overview": (lambda w: "/overview/", ".kpi"),
    "tokens": (lambda w: "/tokens/", "#token-toolsets label, #token-list .state"),
    "prompts": (lambda w: "/prompts/", ".prompt-item, #prompt-list .empty"),
    "shared": (lambda w: f"/shared/{w['share']}/", "#timeline li"),
    "evals": (lambda w: "/evals/", "#set-list li, #set-list .state"),
    "eval-runs": (lambda w: f"/evals/sets/{w['set']}/runs/", "#evalruns-body > *"),
    "eval-compare": (
        lambda w: f"/evals/runs/{w['runs'][0]}/compare/{w['runs'][1]}/",
        "#evalruns-body > *",
    ),
    "access": (lambda w: "/staff/access/", "#matrix th[data-subject]"),
    "audit": (lambda w: "/staff/audit/", "#audit-table"),
    "firehose": (lambda w: "/staff/firehose/", LIVE),
    "agents": (lambda w: "/staff/agents/", ".agent-card"),
    "groups": (lambda w: "/staff/groups/", "#group-list li"),
    "notices": (lambda w: "/staff/notices/", "#notices-table, #notices .state"),
    "people": (lambda w: "/staff/people/", "#people-list li"),
    "changes": (lambda w: "/staff/changes/", "#change-table, #changes .state"),
    "models": (lambda w: "/staff/models/", "#connection-list"),
    "tool-servers": (
        lambda w: "/staff/tool-servers/",
        "#server-list li, #server-list + .state, #server-count",
    ),
}
NOT_PAGES = {"logout", "login"}  # login: signed out (test_the_sign_in_page...)
STAFF_ONLY = {
    "access",
    "audit",
    "firehose",
    "agents",
    "groups",
    "notices",
    "people",
    "changes",
    "models",
    "tool-servers",
}


def test_every_page_is_in_the_list():
    _, pages = get_resolver().namespace_dict["frontend"]
    routes = {pattern.name for pattern in pages.url_patterns}

    assert routes - NOT_PAGES == set(PAGES), (
        "add the new page to PAGES (and STAFF_ONLY if it is staff's)"
    )


def settled(page: Page, ready: str) -> None:
    expect(page.locator(ready).first).to_be_attached()
    page.wait_for_load_state("networkidle")
    expect(page.locator(".state.loading")).to_have_count(0)


def visit(page: Page, path: str, ready: str) -> list[str]:
    page.goto(path)
    settled(page, ready)
    return overflow_problems(page)


def report(found: dict[str, list[str]], width: str) -> str:
    lines = [f"pages wider than the screen, or cut off, at {width}:"]
    for name, problems in found.items():
        lines.append(f"  {name}:")
        lines.extend(f"    - {problem}" for problem in problems[:15])
    return "\n".join(lines)


@pytest.mark.parametrize("width", WIDTHS)
def test_staff_see_every_page_whole(world, sign_in, width, shoot):
    page = sign_in("admin", viewport=WIDTHS[width])
    found = {}
    for name, (path, ready) in PAGES.items():
        problems = visit(page, path(world), ready)
        if problems:
            found[name] = problems
            shoot(page, f"widths-staff-{width}-{name}")

    assert not found, report(found, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_user_sees_every_page_whole(world, sign_in, width, shoot):
    page = sign_in("alice", viewport=WIDTHS[width])
    found = {}
    for name, (path, ready) in PAGES.items():
        # A staff page shows her the page that says it is staff's.
        ready = "main .state.empty" if name in STAFF_ONLY else ready
        problems = visit(page, path(world), ready)
        if problems:
            found[name] = problems
            shoot(page, f"widths-user-{width}-{name}")
    found = {name: problems for name, problems in found.items() if problems}

    assert not found, report(found, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_sign_in_page_is_whole(browser, server, width):
    context = browser.new_context(viewport=WIDTHS[width], base_url=server.url)
    page = context.new_page()
    try:
        page.goto("/login/")
        expect(page.locator("#id_username")).to_be_visible()

        assert_no_overflow(page, "the sign-in page")
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_firehose_with_events_is_whole(world, sign_in, api, width):
    page = sign_in("admin", viewport=WIDTHS[width])
    page.goto("/staff/firehose/")
    expect(page.locator(LIVE)).to_be_visible()
    client = api("alice")
    said = client.post(
        f"/api/sessions/{world['ran']}/messages/?wait=1",
        json={"text": f"and in {LONG_WORD} tomorrow?"},
    )
    assert said.status_code == 200, said.text

    expect(page.locator("#firehose-table tbody tr").first).to_be_visible()
    assert_no_overflow(page, "the firehose with events")


def test_every_staff_page_is_reachable_from_the_menu_at_phone_width(sign_in):
    page = sign_in("admin", viewport=PHONE)
    staff_links = page.locator("#staff-links a")
    # Changes is the Audit page's second tab.
    in_menu = {PAGES[name][0]({}) for name in STAFF_ONLY - {"changes"}}
    expect(staff_links).to_have_count(len(in_menu))
    hrefs = staff_links.evaluate_all(
        "links => links.map((a) => a.getAttribute('href'))"
    )
    assert set(hrefs) == in_menu
    menu = page.get_by_role("button", name="Staff")
    expect(menu).to_have_attribute("aria-expanded", "false")

    menu.focus()
    page.keyboard.press("Enter")

    expect(menu).to_have_attribute("aria-expanded", "true")
    viewport = page.viewport_size["width"]
    for index in range(len(in_menu)):
        link = staff_links.nth(index)
        expect(link).to_be_visible()
        box = link.bounding_box()
        assert box is not None
        assert 0 <= box["x"] and box["x"] + box["width"] <= viewport, (
            f"{link.inner_text()} is off the screen: {box}"
        )
    assert_no_overflow(page, "the staff menu, open")
    page.keyboard.press("Escape")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(menu).to_be_focused()
    expect(staff_links.first).to_be_hidden()
