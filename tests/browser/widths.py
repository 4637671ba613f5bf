"""Is a page as wide as its screen? `assert_no_overflow(page)` for any browser test.

A page fails when it scrolls sideways (the document is wider than the viewport), or
when something a person should see is cut off: a visible element whose right edge
is past the viewport, or past the edge of an ancestor that clips it (overflow
hidden or clip, or a scroller whose scrollbar is hidden, as a nav's can be). An
element inside a scroller with a scrollbar (a wide table in its own container) is
reachable, so it passes, unless it is a control (a link, a button, a field) out of
sight in a scroller that is not wide by nature (SIDEWAYS). Text cut on purpose (text-overflow: ellipsis), visually
hidden text (the `visually-hidden` class) and SVG's insides are left alone. Text
squeezed into a sliver (a title wrapping letter by letter) fails too.
"""

from playwright.sync_api import Page

# Sub-pixel layout and borders: a pixel of slack.
SLACK = 1
# What a person acts on: inside a scroller it must be in sight, not a sideways
# scroll away (a table's Delete button), unless the scroller is wide by nature.
CONTROLS = "a[href], button, input, select, textarea, summary"
# Scrollers wide by nature: the access matrix (a column per person), Markdown's
# tables and code.
SIDEWAYS = "[data-sideways], .markdown .table-scroll, .markdown pre"

FIND_OVERFLOW = """
([slack, CONTROLS, SIDEWAYS]) => {
  const viewport = document.documentElement.clientWidth;
  const problems = [];
  const styles = new Map();
  const style = (el) => {
    if (!styles.has(el)) styles.set(el, getComputedStyle(el));
    return styles.get(el);
  };
  const name = (el) => {
    let text = el.tagName.toLowerCase();
    if (el.id) text += `#${el.id}`;
    const classes = [...el.classList].slice(0, 3);
    if (classes.length) text += `.${classes.join(".")}`;
    const words = (el.innerText || el.value || "").trim().replace(/\\s+/g, " ");
    return words ? `${text} "${words.slice(0, 40)}"` : text;
  };
  const hiddenOnPurpose = (el) => {
    for (let node = el; node && node !== document.body; node = node.parentElement) {
      const s = style(node);
      if (s.clip !== "auto" || s.clipPath !== "none") return true;
      if (s.textOverflow === "ellipsis" && node !== el) return true;
    }
    return false;
  };
  if (document.documentElement.scrollWidth > viewport + slack) {
    problems.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px wide in a ${viewport} px viewport`);
  }
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest("svg") && el.tagName.toLowerCase() !== "svg") continue;
    if (["option", "optgroup", "datalist", "script", "style", "template"].includes(el.tagName.toLowerCase())) continue;
    const rect = el.getBoundingClientRect();
    if (rect.width <= 1 || rect.height <= 1) continue;
    const s = style(el);
    if (s.visibility === "hidden" || s.position === "fixed" && rect.right <= 0) continue;
    if (rect.right <= 0) continue; // parked off-screen on purpose (a skip link)
    if (hiddenOnPurpose(el)) continue;
    let reachable = false;
    let clippedBy = null;
    let hiddenIn = null;
    for (let node = el.parentElement; node && node !== document.documentElement; node = node.parentElement) {
      const ns = style(node);
      const overflow = ns.overflowX;
      if (overflow === "visible") continue;
      const box = node.getBoundingClientRect();
      const left = box.left + node.clientLeft;
      const right = left + node.clientWidth;
      const scrolls = overflow === "auto" || overflow === "scroll";
      if (scrolls && ns.scrollbarWidth !== "none") {
        reachable = true;
        const away = rect.right > right + slack || rect.left < left - slack;
        if (away && el.matches(CONTROLS) && !node.closest(SIDEWAYS)) hiddenIn = node;
        break;
      }
      if (rect.right > right + slack || rect.left < left - slack) {
        clippedBy = node;
        break;
      }
    }
    if (clippedBy) {
      problems.push(`${name(el)} is cut off by ${name(clippedBy).split(" ")[0]} (its right edge ${Math.round(rect.right)} px)`);
      continue;
    }
    if (hiddenIn) {
      problems.push(`${name(el)} is out of sight in ${name(hiddenIn).split(" ")[0]}: a sideways scroll away`);
      continue;
    }
    if (!reachable && rect.right > viewport + slack) {
      problems.push(`${name(el)} ends past the screen's edge: ${Math.round(rect.right)} px of ${viewport}`);
      continue;
    }
    // A title squeezed into a sliver wraps a letter or two a line.
    const own = [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent.trim()).join("");
    const em = parseFloat(s.fontSize) || 16;
    if (own.length >= 6 && s.display !== "inline" && s.textOverflow !== "ellipsis" && el.clientWidth > 0 && el.clientWidth < 2.5 * em) {
      problems.push(`${name(el)} is squeezed to ${el.clientWidth} px wide`);
    }
  }
  return problems;
}
"""


def overflow_problems(page: Page) -> list[str]:
    """What is wider than the screen or cut off on the page as it is now, in words."""
    return page.evaluate(FIND_OVERFLOW, [SLACK, CONTROLS, SIDEWAYS])


def assert_no_overflow(page: Page, where: str = "") -> None:
    """Fail if the page scrolls sideways or cuts anything off (the module's rules)."""
    problems = overflow_problems(page)
    width = page.viewport_size["width"] if page.viewport_size else "?"
    label = where or page.url
    assert not problems, f"{label} at {width} px:\n  - " + "\n  - ".join(problems[:25])
