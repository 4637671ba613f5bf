// A JSON value as a tree a person can read: objects and arrays fold (<details>),
// long strings and long lists are cut with a "Show all" button. Built from nodes,
// never HTML, so any text a tool returns stays text.

import { h } from "./dom.js";
import { gettext, ngettext, interpolate } from "./i18n.js";

const STRING_LIMIT = 280; // characters of a string shown before "Show all"
const ITEM_LIMIT = 40; // entries of an object or array shown before "Show all"
const OPEN_DEPTH = 2; // levels open at first; deeper ones start folded

/**
 * A tree of `value`.
 * @param {*} value any JSON value
 * @param {object} options label: an aria-label for the tree; className: extra classes
 */
export function jsonView(value, { label = "", className = "" } = {}) {
  return h(
    "div",
    { class: `json-tree ${className}`.trim(), role: "group", "aria-label": label || null },
    node(value, 0),
  );
}

function node(value, depth) {
  if (Array.isArray(value)) return branch(value.map((item, index) => [index, item]), depth, true);
  if (value !== null && typeof value === "object") return branch(Object.entries(value), depth, false);
  return leaf(value);
}

/** An object's or array's entries, folded under a one-line summary past OPEN_DEPTH. */
function branch(entries, depth, isArray) {
  if (!entries.length) return h("span", { class: "json-punct" }, isArray ? "[]" : "{}");
  const list = h("ul", { class: "json-entries" });
  const shown = entries.slice(0, ITEM_LIMIT);
  for (const [key, item] of shown) list.append(entry(key, item, depth, isArray));
  const rest = entries.slice(ITEM_LIMIT);
  if (rest.length) {
    const more = h(
      "button",
      { type: "button", class: "json-more link-button" },
      interpolate(isArray ? ngettext("Show all %(n)s item", "Show all %(n)s items", entries.length) : ngettext("Show all %(n)s key", "Show all %(n)s keys", entries.length), { n: entries.length }, true),
    );
    const holder = h("li", { class: "json-more-row" }, more);
    more.addEventListener("click", () => {
      const added = rest.map(([key, item]) => entry(key, item, depth, isArray));
      holder.replaceWith(...added);
      // The button is gone: keep the keyboard where the new entries start.
      added[0].tabIndex = -1;
      added[0].focus();
    });
    list.append(holder);
  }
  if (depth === 0) return list;
  const n = entries.length;
  const count = interpolate(isArray ? ngettext("%(n)s item", "%(n)s items", n) : ngettext("%(n)s key", "%(n)s keys", n), { n }, true);
  return h(
    "details",
    { class: "json-fold", open: depth < OPEN_DEPTH },
    h("summary", {}, h("span", { class: "json-punct" }, isArray ? "[…]" : "{…}"), " ", h("span", { class: "json-count" }, count)),
    list,
  );
}

function entry(key, item, depth, isArray) {
  return h(
    "li",
    { class: "json-entry" },
    h("span", { class: isArray ? "json-index" : "json-key" }, String(key)),
    h("span", { class: "json-punct" }, ": "),
    node(item, depth + 1),
  );
}

function leaf(value) {
  if (typeof value === "string") return stringLeaf(value);
  if (value === null || value === undefined) return h("span", { class: "json-null" }, "null");
  return h("span", { class: `json-${typeof value}` }, String(value));
}

/** A string (app.css draws its quotes); a long one cut, with "Show all". */
function stringLeaf(text) {
  if (text.length <= STRING_LIMIT) return h("span", { class: "json-string" }, text);
  const body = h("span", { class: "json-string" }, `${text.slice(0, STRING_LIMIT)}…`);
  const more = h("button", { type: "button", class: "json-more link-button" }, interpolate(gettext("Show all %(text)s characters"), { text: text.length.toLocaleString() }, true));
  more.addEventListener("click", () => {
    body.textContent = text;
    body.tabIndex = -1;
    more.remove();
    body.focus();
  });
  return h("span", { class: "json-long" }, body, " ", more);
}
