// Markdown, rendered safely: the one place the pages turn text into HTML.
//
// Public API (stable; the timeline, the request cards and artifact previews use it):
//
//   renderMarkdown(text, { headingShift = 0 } = {}) -> HTMLDivElement
//     A <div class="markdown"> holding `text` rendered as GitHub-flavoured Markdown
//     (headings, lists, task lists, tables, links, code). `headingShift` demotes
//     headings (2: "#" becomes <h3>) so they sit under the page's own headings.
//   renderInlineMarkdown(text) -> HTMLSpanElement
//     One line (emphasis, `code`, links), no blocks: a <span class="markdown-inline">.
//   liveMarkdown(element, options) -> { update(text) }
//     For text that grows as it streams: update() with the whole text so far
//     re-renders `element`'s content (at once while that is cheap, else at most a few
//     times a second, always ending on the latest text). Unfinished code fences show
//     as code until they close.
//
// What it guarantees, whatever the text (a model's answer, a tool's description, a
// file): raw HTML in the text is shown as text, never interpreted; marked's output is
// sanitized by DOMPurify; links keep only http(s) and mailto URLs (any other, such as
// javascript: or data:, leaves the link's text without a link) and open in a new tab
// with rel="noopener noreferrer"; images are never loaded (a remote image is a way to
// send data out without a click): each becomes a link to it. Code blocks are
// highlighted by highlight.js (its light or dark theme follows the system's) and get a
// Copy button; wide tables and code scroll sideways instead of widening the page.

import { Marked } from "../vendor/marked.esm.js";
import DOMPurify from "../vendor/purify.es.mjs";
import hljs from "../vendor/highlight.min.js";
import { copyButton } from "./clipboard.js";
import { h } from "./dom.js";
import { schemeMedia } from "./theme.js";
import { gettext } from "./i18n.js";

const SAFE_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);
// Guessing a code block's language is the slow part: only for blocks this short.
const AUTO_DETECT_LIMIT = 5000;
// A short text, or one whose last render was cheaper than CHEAP_RENDER_MS, renders at
// once; a dearer one waits this many times its cost, so a long answer streaming in
// spends at most a fifth of the main thread on rendering.
const EAGER_CHARS = 4000;
const CHEAP_RENDER_MS = 8;
const BUSY_FACTOR = 4;
const MAX_WAIT_MS = 400;

const PURIFY = {
  RETURN_DOM_FRAGMENT: true,
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "form", "img", "iframe", "object", "embed", "video", "audio", "source", "picture", "button", "select", "textarea"],
  FORBID_ATTR: ["style", "id", "name"],
};

// Each stylesheet's colour scheme; its media follows the theme (theme.js).
const THEMES = {
  "highlight-light.min.css": "light",
  "highlight-dark.min.css": "dark",
};

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function highlighted(text, lang) {
  const language = lang && hljs.getLanguage(lang) ? lang : null;
  if (language) return { html: hljs.highlight(text, { language, ignoreIllegals: true }).value, language };
  if (!lang && text.length <= AUTO_DETECT_LIMIT) {
    const guess = hljs.highlightAuto(text);
    if (guess.language && guess.relevance >= 5) return { html: guess.value, language: guess.language };
  }
  return { html: escapeHtml(text), language: null };
}

function markedFor(headingShift) {
  return new Marked({
    gfm: true,
    breaks: true,
    renderer: {
      // The text's own HTML is shown as it was written, never run.
      html({ text, block }) {
        return block ? `<p class="raw-html">${escapeHtml(text.trim())}</p>\n` : escapeHtml(text);
      },
      // A task list's box as a character: a disabled checkbox would be a form field.
      checkbox({ checked }) {
        return checked ? "☑ " : "☐ ";
      },
      heading({ tokens, depth }) {
        const level = Math.min(6, depth + headingShift);
        return `<h${level}>${this.parser.parseInline(tokens)}</h${level}>\n`;
      },
      // An image becomes a link to it: loading it would call its server unasked.
      image({ href, text }) {
        return `<a href="${escapeHtml(href)}" data-image="true">${escapeHtml(text || "image")}</a>`;
      },
      code({ text, lang }) {
        const name = (lang || "").trim().split(/\s+/)[0].toLowerCase();
        const { html, language } = highlighted(text.replace(/\n$/, ""), name);
        const label = name || language || "";
        return `<pre data-lang="${escapeHtml(label)}"><code class="hljs${language ? ` language-${escapeHtml(language)}` : ""}">${html}</code></pre>\n`;
      },
    },
  });
}

const parsers = new Map();
function parser(headingShift) {
  if (!parsers.has(headingShift)) parsers.set(headingShift, markedFor(headingShift));
  return parsers.get(headingShift);
}

/** A link keeps a safe URL and opens apart from the page; any other loses its link. */
function secureLinks(root) {
  for (const link of root.querySelectorAll("a")) {
    const url = safeUrl(link.getAttribute("href"));
    if (!url) {
      link.replaceWith(...link.childNodes);
      continue;
    }
    link.setAttribute("href", url);
    link.setAttribute("target", "_blank");
    link.setAttribute("rel", "noopener noreferrer");
    if (link.dataset.image) {
      link.prepend(gettext("Image: "));
      delete link.dataset.image;
    }
  }
}

function safeUrl(href) {
  if (!href) return null;
  let url;
  try {
    url = new URL(href, document.baseURI);
  } catch {
    return null;
  }
  return SAFE_PROTOCOLS.has(url.protocol) ? url.href : null;
}

/** Each code block in a frame: its language and a Copy button above, scrolling sideways. */
function frameCode(root) {
  for (const pre of root.querySelectorAll("pre")) {
    const code = pre.querySelector("code") || pre;
    const lang = pre.dataset.lang || "";
    pre.removeAttribute("data-lang");
    pre.setAttribute("tabindex", "0");
    const block = h(
      "div",
      { class: "code-block" },
      h("div", { class: "code-head" }, h("span", { class: "code-lang" }, lang), copyButton(() => code.textContent, { label: gettext("Copy code") })),
    );
    pre.replaceWith(block);
    block.append(pre);
  }
}

function frameTables(root) {
  for (const table of root.querySelectorAll("table")) {
    const scroll = h("div", { class: "table-scroll", tabindex: "0" });
    table.replaceWith(scroll);
    scroll.append(table);
  }
}

function sanitized(html) {
  const fragment = DOMPurify.sanitize(html, PURIFY);
  secureLinks(fragment);
  frameCode(fragment);
  frameTables(fragment);
  return fragment;
}

let themed = false;
/** highlight.js's light and dark themes, linked once, each for its colour scheme. */
function linkThemes() {
  if (themed) return;
  themed = true;
  for (const [file, scheme] of Object.entries(THEMES)) {
    const href = new URL(`../vendor/${file}`, import.meta.url).href;
    const media = schemeMedia(scheme);
    document.head.append(h("link", { rel: "stylesheet", href, media, dataset: { markdownTheme: scheme } }));
  }
}

/**
 * Markdown text as a <div class="markdown">: sanitized, links made safe, code
 * highlighted with a Copy button each.
 * @param {string} text Markdown source.
 * @param {object} [options] headingShift: levels to demote headings by (0 to 5).
 * @returns {HTMLDivElement}
 */
export function renderMarkdown(text, { headingShift = 0 } = {}) {
  linkThemes();
  const html = parser(headingShift).parse(String(text ?? ""), { async: false }).trim();
  const box = h("div", { class: "markdown" });
  box.append(sanitized(html));
  return box;
}

/**
 * One line of Markdown (emphasis, code spans, links) as a <span class="markdown-inline">.
 * @param {string} text
 * @returns {HTMLSpanElement}
 */
export function renderInlineMarkdown(text) {
  const html = parser(0).parseInline(String(text ?? ""), { async: false });
  const span = h("span", { class: "markdown-inline" });
  span.append(sanitized(html));
  return span;
}

/**
 * Keep `element` showing the Markdown of a text that grows (a streaming answer).
 * @param {HTMLElement} element whose children are replaced.
 * @param {object} [options] renderMarkdown's options.
 * @returns {{update: (text: string) => void}}
 */
export function liveMarkdown(element, options = {}) {
  let latest = "";
  let shown = null;
  let timer = null;
  let cost = 0;
  const draw = () => {
    timer = null;
    if (latest === shown) return;
    const start = performance.now();
    element.replaceChildren(renderMarkdown(latest, options));
    shown = latest;
    cost = performance.now() - start;
  };
  return {
    update(text) {
      latest = String(text ?? "");
      if (timer !== null) return;
      if (latest.length <= EAGER_CHARS || cost < CHEAP_RENDER_MS) draw();
      else timer = setTimeout(draw, Math.min(MAX_WAIT_MS, cost * BUSY_FACTOR));
    },
  };
}
