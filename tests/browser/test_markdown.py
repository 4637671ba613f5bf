"""Model answers read as Markdown (frontend/static/frontend/markdown.js): headings,
lists, tables, links and highlighted code with a Copy button, rendered as the answer
streams in; a person's own message stays the text she typed.

The offline model repeats what it does not understand ("You said: ..."), so a message
in Markdown to the preferences agent comes back as a Markdown answer.
"""

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import NEW_TIMELINE, send, start_session
from tests.live.server import ROOT

pytestmark = pytest.mark.browser

AXE = ROOT / "frontend" / "vendor" / "node_modules" / "axe-core" / "axe.min.js"

CODE = "def add(a, b):\n    # the sum, printed\n    print(a + b)\n    return a + b"
ANSWER = f"""Release notes

## Steps

- first
- second

| Name | Size |
|------|------|
| alpha | 1 |

See [the docs](https://example.com/docs).

```python
{CODE}
```"""
WIDE = "w" * 400
WIDE_ANSWER = f"""Wide things

| Column | Value |
|---|---|
| long | {WIDE} |

```
x = "{WIDE}"
```"""


def answer(page: Page):
    """The stored (not streaming) model answers' text."""
    return page.locator("#timeline li.kind-text.agent:not(.streaming) .bubble-text")


def clipboard(page: Page) -> str:
    return page.evaluate("() => navigator.clipboard.readText()")


def serious_violations(page: Page, scope: str) -> list[str]:
    """axe-core's serious and critical findings within `scope`."""
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        "async (scope) => (await axe.run(scope)).violations"
        ".filter((v) => ['serious', 'critical'].includes(v.impact))"
        ".map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(' ')}`)",
        scope,
    )
    return found


def test_a_markdown_answer_renders_and_its_code_and_text_copy(sign_in, server, shoot):
    page = sign_in("alice")
    page.context.grant_permissions(
        ["clipboard-read", "clipboard-write"], origin=server.url
    )
    start_session(page, "preferences")
    send(page, ANSWER)

    shown = answer(page).last
    expect(shown.locator(".markdown")).to_be_visible()
    # "##" sits two levels under the page's own headings.
    expect(shown.locator("h4")).to_have_text("Steps")
    expect(shown.locator("ul > li")).to_have_text(["first", "second"])
    expect(shown.locator(".table-scroll table th")).to_have_text(["Name", "Size"])
    expect(shown.locator("table td").first).to_have_text("alpha")
    link = shown.locator("a", has_text="the docs")
    expect(link).to_have_attribute("href", "https://example.com/docs")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    block = shown.locator(".code-block")
    expect(block.locator(".code-lang")).to_have_text("python")
    expect(block.locator("code.language-python .hljs-keyword").first).to_have_text(
        "def"
    )
    shoot(page, "markdown-answer")
    assert serious_violations(page, "#timeline") == []
    page.emulate_media(color_scheme="dark")
    assert serious_violations(page, "#timeline") == []
    page.emulate_media(color_scheme="light")

    block.get_by_role("button", name="Copy code").click()
    expect(block.locator(".copy-button")).to_have_text("Copied")
    assert clipboard(page) == CODE

    item = page.locator("#timeline li.kind-text.agent:not(.streaming)").last
    item.get_by_role("button", name="Copy answer").click()
    expect(item.locator(".copy-answer")).to_have_text("Copied")
    assert clipboard(page) == f"You said: {ANSWER}"

    # The user's message is her text as typed: Markdown shown, not rendered.
    mine = page.locator("#timeline li.user .bubble-text").last
    expect(mine).to_contain_text("## Steps")
    expect(mine.locator("h4, table, a, pre")).to_have_count(0)


def test_wide_tables_and_code_scroll_inside_the_answer(sign_in):
    page = sign_in("alice")
    start_session(page, "preferences")
    send(page, WIDE_ANSWER)

    shown = answer(page).last
    expect(shown.locator(".table-scroll table")).to_be_visible()
    expect(shown.locator(".code-block pre")).to_be_visible()
    sizes = shown.evaluate(
        """el => {
          const scrolls = (node) => node.scrollWidth > node.clientWidth;
          const timeline = document.getElementById("timeline-scroll");
          return {
            table: scrolls(el.querySelector(".table-scroll")),
            code: scrolls(el.querySelector(".code-block pre")),
            timeline: scrolls(timeline),
            bubble: el.closest(".bubble").getBoundingClientRect().right,
            column: timeline.getBoundingClientRect().right,
          };
        }"""
    )
    assert sizes["table"] is True
    assert sizes["code"] is True
    assert sizes["timeline"] is False
    assert sizes["bubble"] <= sizes["column"]


STREAM_SCRIPT = (
    """
async () => {
"""
    + NEW_TIMELINE
    + """  const frame = (seq, extra) => ({
    type: "event", seq, session: "s",
    event: { id: `e${seq}`, invocation_id: "i1", author: "bot", kind: "text",
             partial: seq === null, ts: 100, ...extra },
  });
  const seen = [];
  const look = () => {
    const text = list.querySelector(".streaming .bubble-text");
    seen.push({
      heading: text.querySelector("h4") ? text.querySelector("h4").textContent : null,
      items: text.querySelectorAll("li").length,
      code: text.querySelector("pre code") ? text.querySelector("pre code").textContent : null,
      raw: text.textContent.includes("## "),
    });
  };
  const chunks = ["## Plan\\n\\n- one\\n", "- two\\n\\n```js\\nconst a", " = 1;\\n", "```\\n"];
  let whole = "";
  for (const chunk of chunks) {
    whole += chunk;
    timeline.apply(frame(null, { text: chunk }));
    look();
  }
  timeline.apply(frame(1, { text: whole }));
  const final = list.querySelector(".kind-text .bubble-text");
  return {
    seen,
    streaming: list.querySelectorAll(".streaming").length,
    final: { heading: final.querySelector("h4").textContent, code: final.querySelector("pre code").textContent },
  };
}
"""
)


def test_a_streaming_answer_is_rendered_as_it_grows(browser, server):
    context = browser.new_context(base_url=server.url)
    page = context.new_page()
    page.goto("/login/")

    shown = page.evaluate(STREAM_SCRIPT)
    context.close()

    assert shown["seen"] == [
        {"heading": "Plan", "items": 1, "code": None, "raw": False},
        # An unfinished fence is already code.
        {"heading": "Plan", "items": 2, "code": "const a", "raw": False},
        {"heading": "Plan", "items": 2, "code": "const a = 1;", "raw": False},
        {"heading": "Plan", "items": 2, "code": "const a = 1;", "raw": False},
    ]
    assert shown["streaming"] == 0
    assert shown["final"] == {"heading": "Plan", "code": "const a = 1;"}


INLINE_SCRIPT = """
async () => {
  const { renderInlineMarkdown } = await import("/static/frontend/markdown.js");
  const span = renderInlineMarkdown("Sends `amount` to **bob**, see [the rules](https://example.com/r)\\n\\n# not a heading");
  return {
    tag: span.tagName,
    code: span.querySelector("code").textContent,
    strong: span.querySelector("strong").textContent,
    link: span.querySelector("a").getAttribute("rel"),
    blocks: span.querySelectorAll("h1, h2, h3, p, div").length,
  };
}
"""


def test_a_one_line_description_renders_inline_markdown(browser, server):
    context = browser.new_context(base_url=server.url)
    page = context.new_page()
    page.goto("/login/")

    shown = page.evaluate(INLINE_SCRIPT)
    context.close()

    assert shown == {
        "tag": "SPAN",
        "code": "amount",
        "strong": "bob",
        "link": "noopener noreferrer",
        "blocks": 0,
    }
