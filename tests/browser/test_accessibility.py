"""axe-core over every page, at desktop (1280×800) and phone (390×844) width, for a
user and for staff where the pages differ: no serious or critical violation of
WCAG 2.x A/AA (2.2's target size included) or axe's best practices.

axe-core comes from npm (frontend/vendor/package.json, a devDependency), injected
into each page once it has loaded what it shows. A failure lists each violation's
rule, impact, help and the elements it found, page by page.
"""

import re
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import DESKTOP, PHONE
from tests.live.server import ROOT

pytestmark = pytest.mark.browser

AXE = ROOT / "frontend" / "vendor" / "node_modules" / "axe-core" / "axe.min.js"
TAGS = [
    "wcag2a",
    "wcag2aa",
    "wcag21a",
    "wcag21aa",
    "wcag22a",
    "wcag22aa",
    "best-practice",
]
BLOCKING = {"serious", "critical"}
VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}
RUN_AXE = """
async (tags) => {
  const result = await axe.run(document, {
    runOnly: { type: "tag", values: tags },
    resultTypes: ["violations"],
  });
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    targets: v.nodes.slice(0, 6).map((n) => n.target.join(" ")),
    summary: (v.nodes[0] && v.nodes[0].failureSummary) || "",
  }));
}
"""


def violations(page: Page) -> list[str]:
    """axe's serious and critical violations on the page as it is now, in words."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate(RUN_AXE, TAGS)
    return [
        f"{v['id']} ({v['impact']}): {v['help']}\n      at {v['targets']}"
        f"\n      {v['summary'][:300]}"
        for v in found
        if v["impact"] in BLOCKING
    ]


def settled(page: Page, ready: str) -> None:
    expect(page.locator(ready).first).to_be_attached()
    page.wait_for_load_state("networkidle")
    expect(page.locator(".state.loading")).to_have_count(0)


def audit_pages(page: Page, pages: dict[str, tuple[str, str]]) -> dict[str, list]:
    found = {}
    for name, (path, ready) in pages.items():
        page.goto(path)
        settled(page, ready)
        problems = violations(page)
        if problems:
            found[f"{name} ({path})"] = problems
    return found


def report(found: dict[str, list]) -> str:
    lines = ["axe found serious or critical violations:"]
    for page, problems in found.items():
        lines.append(f"  {page}:")
        lines.extend(f"    - {problem}" for problem in problems)
    return "\n".join(lines)


@pytest.fixture(scope="module")
def world(server) -> Iterator[dict[str, str]]:
    """alice's sessions: empty, with a finished run and an artifact of two versions,
    with an approval waiting."""
    token = server.token("alice", "alice")
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Token {token}"}, timeout=60
    ) as client:

        def session(agent: str, text: str | None = None) -> str:
            made = client.post("/api/sessions/", json={"agent": agent}).json()["id"]
            if text:
                said = client.post(
                    f"/api/sessions/{made}/messages/?wait=1", json={"text": text}
                )
                assert said.status_code == 200, said.text
            return made

        ran = session("weather_sentiment", "weather in london?")
        for text in ["first draft", "second draft"]:  # two versions: version links
            saved = client.post(
                f"/api/sessions/{ran}/artifacts/",
                files={"file": ("notes.txt", text.encode(), "text/plain")},
            )
            assert saved.status_code == 201, saved.text
        waiting = session("bank", 'wire 500 to "bob"')
        yield {"empty": session("weather_sentiment"), "ran": ran, "waiting": waiting}
        # Leave no request waiting in alice's or staff's inbox for the next files.
        for approval in client.get(f"/api/approvals/?session={waiting}").json():
            client.post(
                f"/api/approvals/{approval['id']}/decide/", json={"approved": False}
            )


def user_pages(world: dict[str, str]) -> dict[str, tuple[str, str]]:
    live = '#live-status[data-status="live"]'
    return {
        "home": ("/", "#agents .agent-option"),
        "session, empty": (f"/sessions/{world['empty']}/", live),
        "session, with a run": (
            f"/sessions/{world['ran']}/",
            ".artifact-list .versions a",
        ),
        "session, approval waiting": (
            f"/sessions/{world['waiting']}/",
            '.request-box[data-kind="approval"] button',
        ),
        "inbox": ("/inbox/", "#inbox-tabs"),
        "overview": ("/overview/", ".kpi"),
        "staff only": ("/staff/audit/", ".state.empty"),
        "not found": ("/no-such-page/", "h1"),
    }


STAFF_PAGES = {
    "home": ("/", "#agents .agent-option"),
    "inbox": ("/inbox/", "#inbox-tabs"),
    "overview": ("/overview/", ".kpi"),
    "access": ("/staff/access/", "#matrix th[data-subject]"),
    "groups": ("/staff/groups/", "#group-list li"),
    "audit": ("/staff/audit/", "#audit-table"),
    "firehose": ("/staff/firehose/", '#live-status[data-status="live"]'),
    "agents": ("/staff/agents/", ".agent-card"),
    "notices": ("/staff/notices/", "#notices-table, #notices .state.empty"),
    "people": ("/staff/people/", "#people-list li"),
    "changes": ("/staff/changes/", "#change-table, #changes .state.empty"),
}


@pytest.mark.parametrize("width", VIEWPORTS)
def test_a_users_pages_have_no_serious_violation(world, sign_in, width):
    page = sign_in("alice", viewport=VIEWPORTS[width])

    found = audit_pages(page, user_pages(world))

    assert not found, report(found)


@pytest.mark.parametrize("width", VIEWPORTS)
def test_staff_pages_have_no_serious_violation(world, sign_in, width):
    page = sign_in("admin", viewport=VIEWPORTS[width])
    pages = {
        **STAFF_PAGES,
        "someone else's session": (
            f"/sessions/{world['waiting']}/",
            '.request-box[data-kind="approval"] button',
        ),
    }

    found = audit_pages(page, pages)

    assert not found, report(found)


def test_a_users_pages_have_no_serious_violation_in_dark_mode(world, sign_in):
    page = sign_in("alice")
    page.emulate_media(color_scheme="dark")

    found = audit_pages(page, user_pages(world))

    assert not found, report(found)


def test_staff_pages_have_no_serious_violation_in_dark_mode(sign_in):
    page = sign_in("admin")
    page.emulate_media(color_scheme="dark")

    found = audit_pages(page, STAFF_PAGES)

    assert not found, report(found)


@pytest.mark.parametrize("width", VIEWPORTS)
def test_the_sign_in_page_has_no_serious_violation(browser, server, width):
    context = browser.new_context(
        viewport=VIEWPORTS[width], base_url=server.url, is_mobile=width == "phone"
    )
    page = context.new_page()
    try:
        found = audit_pages(page, {"sign in": ("/login/", "#id_username")})
    finally:
        context.close()

    assert not found, report(found)


@pytest.mark.parametrize("width", VIEWPORTS)
def test_attaching_and_previewing_files_have_no_serious_violation(
    world, sign_in, width
):
    page = sign_in("alice", viewport=VIEWPORTS[width])
    page.goto(f"/sessions/{world['ran']}/")
    settled(page, ".artifact-list .versions a")
    found = {}

    page.locator("#attach-input").set_input_files(
        files=[{"name": "plan.md", "mimeType": "text/markdown", "buffer": b"# Plan"}]
    )
    expect(
        page.locator('#attachments .attachment[data-name="plan.md"]')
    ).to_be_visible()
    found["a file attached"] = violations(page)
    page.get_by_role("button", name="Preview notes.txt").click()
    expect(page.locator("#artifact-preview")).to_be_visible()
    expect(page.locator("#preview-body")).to_contain_text("second draft")
    found["an artifact previewed"] = violations(page)

    found = {name: problems for name, problems in found.items() if problems}
    assert not found, report(found)


def test_the_brand_link_is_named_at_phone_width(sign_in):
    page = sign_in("alice", viewport=PHONE)

    brand = page.get_by_role("link", name="Toolcrib", exact=True)

    expect(brand).to_be_visible()
    # The word is not shown at this width: the icon alone is the target.
    assert page.locator("a.brand span").bounding_box()["width"] <= 1
    assert brand.bounding_box()["height"] >= 24


def test_focus_moves_to_the_cards_outcome_after_approving_by_keyboard(server, sign_in):
    token = server.token("alice", "alice")
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Token {token}"}, timeout=60
    ) as client:
        session = client.post("/api/sessions/", json={"agent": "bank"}).json()["id"]
        said = client.post(
            f"/api/sessions/{session}/messages/?wait=1",
            json={"text": 'wire 300 to "carol"'},
        )
        assert said.status_code == 200, said.text
    page = sign_in("alice")
    page.goto(f"/sessions/{session}/")
    card = page.locator('.request-box[data-kind="approval"]')
    approve = card.get_by_role("button", name=re.compile("^Approve"))
    expect(approve).to_be_enabled()

    approve.focus()
    page.keyboard.press("Enter")

    expect(card).to_have_attribute("data-status", "approved")
    expect(card.locator(".approval-outcome")).to_contain_text("Approved by alice")
    focused = page.evaluate(
        "() => ({inCard: !!document.activeElement.closest('.request-box'),"
        " text: document.activeElement.textContent,"
        " tag: document.activeElement.tagName})"
    )
    assert focused["tag"] != "BODY", focused
    assert focused["inCard"], focused
    assert "Approved by alice" in focused["text"], focused
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement !== document.body")


MAKE_UNA = (
    "from django.contrib.auth.models import User; "
    "User.objects.filter(username='una').exists() "
    "or User.objects.create_user('una', password='una')"
)


@pytest.fixture(scope="module")
def una(live_env) -> str:
    """A user of her own, so her inbox holds only this file's requests."""
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", MAKE_UNA],
        cwd=ROOT,
        env=dict(live_env),
        check=True,
        capture_output=True,
    )
    return "una"


def wires_to_approve(server, user: str, *amounts: int) -> None:
    """One turn of the bank agent per amount, each waiting for `user`'s approval."""
    token = server.token(user, user)
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Token {token}"}, timeout=60
    ) as client:
        for amount in amounts:
            session = client.post("/api/sessions/", json={"agent": "bank"}).json()
            said = client.post(
                f"/api/sessions/{session['id']}/messages/?wait=1",
                json={"text": f'wire {amount} to "dave"'},
            )
            assert said.status_code == 200, said.text


def test_focus_moves_to_the_next_request_after_approving_in_the_inbox(
    server, sign_in, una
):
    wires_to_approve(server, una, 100, 200)
    page = sign_in(una)
    page.goto("/inbox/")
    cards = page.locator("#requests-waiting .card.request")
    expect(cards).to_have_count(2)
    first = cards.first.get_by_role("button", name=re.compile("^Approve"))

    first.focus()
    page.keyboard.press("Enter")

    expect(cards).to_have_count(1)
    expect(cards.first).to_be_focused()
    cards.first.get_by_role("button", name=re.compile("^Approve")).focus()
    page.keyboard.press("Enter")
    expect(page.locator("#requests-waiting .state.empty")).to_be_focused()


def test_focus_reaches_the_empty_inbox_when_the_live_refetch_wins_the_race(
    server, sign_in, una
):
    """Approving the last request, the inbox's live refetch (the request frame) can
    empty the list before the answer's own reply comes back: focus still lands on
    the empty list, and the page raises nothing (the list was out of its box)."""
    wires_to_approve(server, una, 300)
    page = sign_in(una)
    page.goto("/inbox/")
    cards = page.locator("#requests-waiting .card.request")
    expect(cards).to_have_count(1)
    emptied = page.locator("#requests-waiting .state.empty")

    def answer_after_the_refetch(route) -> None:
        answered = route.fetch()  # the approval is made, and told live
        emptied.wait_for()
        route.fulfill(response=answered)

    page.route("**/api/requests/*/answer/", answer_after_the_refetch)
    cards.first.get_by_role("button", name=re.compile("^Approve")).focus()
    page.keyboard.press("Enter")

    expect(emptied).to_be_focused()
