// Small DOM helpers: build elements with text (never HTML strings), format values.

import { gettext, ngettext, pgettext, interpolate } from "./i18n.js";

const SVG_NS = "http://www.w3.org/2000/svg";

function setAttrs(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.setAttribute("class", value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
}

function appendAll(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

/** An HTML element: h("a", {href: "/"}, "Home"). Children are text or nodes. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  appendAll(el, children);
  return el;
}

/** An SVG element, same signature as h(). */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  appendAll(el, children);
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren();
  appendAll(el, children);
  return el;
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

/** A value as readable JSON, cut after `limit` characters. */
export function json(value, limit = 4000) {
  let text;
  try {
    text = JSON.stringify(value, null, 2);
  } catch {
    text = String(value);
  }
  if (text === undefined) text = "undefined";
  return text.length > limit ? `${text.slice(0, limit)}\n${interpolate(ngettext("… (%(n)s more character)", "… (%(n)s more characters)", text.length - limit), { n: text.length - limit }, true)}` : text;
}

/** A one-line summary of a value, for tables. */
export function inline(value, limit = 120) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (!text) return "";
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "";
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60000);
  return `${minutes} min ${Math.round((ms % 60000) / 1000)} s`;
}

const STEPS = [
  [60, "second"],
  [60, "minute"],
  [24, "hour"],
  [7, "day"],
  [4.35, "week"],
  [12, "month"],
  [Infinity, "year"],
];

// "3 minutes ago" and "in 3 minutes" in the page's language (the catalog's plural
// rules), whatever the browser's own locale.
function relative(count, unit) {
  const past = count < 0;
  const n = Math.abs(count);
  const words = {
    second: past ? ngettext("%(n)s second ago", "%(n)s seconds ago", n) : ngettext("in %(n)s second", "in %(n)s seconds", n),
    minute: past ? ngettext("%(n)s minute ago", "%(n)s minutes ago", n) : ngettext("in %(n)s minute", "in %(n)s minutes", n),
    hour: past ? ngettext("%(n)s hour ago", "%(n)s hours ago", n) : ngettext("in %(n)s hour", "in %(n)s hours", n),
    day: past ? ngettext("%(n)s day ago", "%(n)s days ago", n) : ngettext("in %(n)s day", "in %(n)s days", n),
    week: past ? ngettext("%(n)s week ago", "%(n)s weeks ago", n) : ngettext("in %(n)s week", "in %(n)s weeks", n),
    month: past ? ngettext("%(n)s month ago", "%(n)s months ago", n) : ngettext("in %(n)s month", "in %(n)s months", n),
    year: past ? ngettext("%(n)s year ago", "%(n)s years ago", n) : ngettext("in %(n)s year", "in %(n)s years", n),
  };
  return interpolate(words[unit], { n }, true);
}

/** "3 minutes ago" for a Date, an ISO string or epoch seconds. */
export function ago(when) {
  const date = toDate(when);
  if (!date) return "";
  let value = (date.getTime() - Date.now()) / 1000;
  if (Math.abs(value) < 10) return gettext("just now");
  for (const [size, unit] of STEPS) {
    if (Math.abs(value) < size) return relative(Math.round(value), unit);
    value /= size;
  }
  return "";
}

export function toDate(when) {
  if (when === null || when === undefined || when === "") return null;
  if (when instanceof Date) return when;
  if (typeof when === "number") return new Date(when * 1000);
  const date = new Date(when);
  return Number.isNaN(date.getTime()) ? null : date;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function clock(when) {
  const date = toDate(when);
  return date ? timeFormat.format(date) : "";
}

export function dateTime(when) {
  const date = toDate(when);
  return date ? dateTimeFormat.format(date) : "";
}

/** A <time> element that says "3 minutes ago" and shows the full date on hover. */
export function timeAgo(when) {
  const date = toDate(when);
  if (!date) return h("span", { class: "muted" }, "—");
  return h("time", { datetime: date.toISOString(), title: dateTimeFormat.format(date) }, ago(date));
}

export function badge(text, tone = "") {
  return h("span", { class: `badge ${tone}`.trim() }, text);
}

const STATUS_TONES = {
  ok: "ok",
  succeeded: "ok",
  allow: "ok",
  running: "live",
  queued: "wait",
  pending: "wait",
  error: "bad",
  failed: "bad",
  denied: "bad",
  deny: "bad",
  timeout: "bad",
  approved: "ok",
  rejected: "bad",
  expired: "bad",
  awaiting: "wait",
  // A run that ended for now, waiting for a person; an audited call held for one.
  waiting: "wait",
  awaiting_approval: "wait",
  cached: "ok",
};

/** A status as a person reads it, in the page's language (the code itself if unknown). */
export function statusWord(status) {
  const words = {
    ok: pgettext("status", "ok"),
    succeeded: pgettext("status", "succeeded"),
    allow: pgettext("status", "allow"),
    running: pgettext("status", "running"),
    queued: pgettext("status", "queued"),
    pending: pgettext("status", "pending"),
    error: pgettext("status", "error"),
    failed: pgettext("status", "failed"),
    denied: pgettext("status", "denied"),
    deny: pgettext("status", "deny"),
    timeout: pgettext("status", "timeout"),
    approved: pgettext("status", "approved"),
    rejected: pgettext("status", "rejected"),
    expired: pgettext("status", "expired"),
    awaiting: pgettext("status", "awaiting"),
    waiting: pgettext("status", "waiting"),
    awaiting_approval: pgettext("status", "awaiting approval"),
    cached: pgettext("status", "cached"),
    cancelled: pgettext("status", "cancelled"),
    answered: pgettext("status", "answered"),
  };
  return words[status] || status || "—";
}

export function statusBadge(status) {
  return badge(statusWord(status), STATUS_TONES[status] || "");
}

/** A short-lived message at the bottom of the screen. */
export function toast(message, tone = "") {
  const box = document.getElementById("toasts");
  if (!box) return;
  const item = h("div", { class: `toast ${tone}`.trim(), role: tone === "bad" ? "alert" : "status" }, message);
  box.append(item);
  setTimeout(() => item.remove(), 5000);
}

/** Loading, empty and error states, the same everywhere. */
export function loading(text = gettext("Loading…")) {
  return h("div", { class: "state loading", role: "status" }, h("span", { class: "spinner", "aria-hidden": "true" }), text);
}

export function empty(title, ...details) {
  return h("div", { class: "state empty" }, h("strong", {}, title), ...details.map((d) => h("p", {}, d)));
}

export function failure(error, retry) {
  const message = error && error.message ? error.message : String(error);
  return h(
    "div",
    { class: "state error", role: "alert" },
    h("strong", {}, gettext("Something went wrong")),
    h("p", {}, message),
    retry ? h("button", { type: "button", class: "button", onclick: retry }, gettext("Try again")) : null,
  );
}

export function debounce(fn, wait) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), wait);
  };
}

/** A call's arguments as a definition list: text as is, objects as JSON. */
export function argsView(args) {
  const entries = Object.entries(args || {});
  if (!entries.length) return h("span", { class: "muted" }, gettext("none"));
  return h(
    "dl",
    { class: "args" },
    entries.map(([key, value]) => [
      h("dt", {}, key),
      h("dd", {}, typeof value === "string" ? value : value !== null && typeof value === "object" ? h("pre", { class: "json" }, json(value)) : JSON.stringify(value)),
    ]),
  );
}

/**
 * Name each body cell of a table by its column's heading (data-label): on a narrow
 * screen a `.table.cards` shows each row as a card, each value under its name
 * (app.css). Call it again after adding rows; a cell already named keeps its name.
 */
export function labelCells(table) {
  const head = table.tHead && table.tHead.rows[0];
  if (!head) return;
  const names = [...head.cells].map((cell) => cell.textContent.trim());
  for (const body of table.tBodies) {
    for (const row of body.rows) {
      [...row.cells].forEach((cell, index) => {
        if (names[index] && !cell.dataset.label) cell.dataset.label = names[index];
      });
    }
  }
}
