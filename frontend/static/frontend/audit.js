// The audit log of tool calls, filtered by user, agent, tool, status and time,
// with the filters kept in the URL and CSV / JSON lines exports of the same query.
// A call held for approval reads its decision, who made it and when. The newest
// PAGE calls first; "Load more" appends the next PAGE older ones (the API's
// `before` cursor: the last call shown), until a page comes back short.

import { api, withQuery } from "./api.js";
import { clear, dateTime, duration, empty, failure, h, inline, json, labelCells, loading, statusBadge, toast } from "./dom.js";
import { gettext, interpolate, ngettext } from "./i18n.js";

const PAGE = 100;
const form = document.getElementById("audit-filters");
const box = document.getElementById("audit");
const exportsBox = document.getElementById("exports");
const FIELDS = ["user", "agent", "tool", "status", "since", "until"];
// The list shown: its filters, its last call, its table and Load more. A new
// load() starts a new one; a page that answers for an older one is dropped.
let shown = null;

/** The status filter: every status, grouped by what it means (the server's groups). */
async function statusOptions() {
  const select = form.elements.status;
  let groups = [];
  try {
    groups = await api("/api/tool-calls/outcomes/");
  } catch {
    // Without the groups the filter offers "any" (and the URL's status, kept below).
    const status = new URLSearchParams(window.location.search).get("status");
    if (status) select.append(h("option", { value: status }, status.replaceAll("_", " ")));
  }
  for (const group of groups) {
    select.append(h("optgroup", { label: group.label }, group.statuses.map((status) => h("option", { value: status }, status.replaceAll("_", " ")))));
  }
}

function fromUrl() {
  const params = new URLSearchParams(window.location.search);
  for (const name of FIELDS) {
    if (params.has(name)) form.elements[name].value = params.get(name);
  }
}

function query() {
  const values = {};
  for (const name of FIELDS) {
    const value = form.elements[name].value.trim();
    if (!value) continue;
    // datetime-local is the browser's local time: send it with its offset.
    values[name] = name === "since" || name === "until" ? new Date(value).toISOString() : value;
  }
  return values;
}

function keepInUrl() {
  const params = new URLSearchParams();
  for (const name of FIELDS) {
    const value = form.elements[name].value.trim();
    if (value) params.set(name, value);
  }
  const text = params.toString();
  history.replaceState(null, "", text ? `?${text}` : window.location.pathname);
}

async function load() {
  const list = { filters: query(), last: null };
  shown = list;
  clear(box, loading(gettext("Loading tool calls…")));
  const filters = list.filters;
  clear(
    exportsBox,
    h("a", { class: "button small", href: withQuery("/api/tool-calls/", { ...filters, format: "csv" }) }, gettext("Export CSV")),
    h("a", { class: "button small", href: withQuery("/api/tool-calls/", { ...filters, format: "jsonl" }) }, gettext("Export JSON lines")),
  );
  let calls;
  try {
    calls = await api("/api/tool-calls/", { query: { ...filters, limit: PAGE } });
  } catch (error) {
    if (shown === list) clear(box, failure(error, load));
    return;
  }
  if (shown !== list) return;
  if (!calls.length) {
    const filtered = Object.keys(filters).length > 0;
    clear(box, empty(filtered ? gettext("No tool call matches these filters") : gettext("No tool calls yet"), filtered ? gettext("Clear a filter or widen the time range.") : gettext("Calls appear here as agents use tools.")));
    return;
  }
  list.body = h("tbody", {}, calls.map(callRow));
  list.table = h(
    "table",
    { class: "table cards cards-wide", id: "audit-table" },
    h(
      "thead",
      {},
      h("tr", {}, [gettext("When"), gettext("User"), gettext("Agent"), gettext("Tool"), gettext("Status"), gettext("Duration"), gettext("Decided"), gettext("Access rule"), gettext("Arguments and result")].map((title) => h("th", { scope: "col", class: title === gettext("Duration") ? "num" : "" }, title))),
    ),
    list.body,
  );
  list.count = h("span", { class: "muted small", role: "status" });
  list.more = h("button", { type: "button", class: "button", id: "audit-more", onclick: () => loadMore(list) }, gettext("Load more"));
  clear(box, list.table, h("div", { class: "pad audit-more" }, list.more, list.count));
  labelCells(list.table);
  showMore(list, calls);
}

/** The next PAGE calls of `list`, older than its last, appended to its table. */
async function loadMore(list) {
  list.more.disabled = true;
  list.more.textContent = gettext("Loading…");
  try {
    const calls = await api("/api/tool-calls/", { query: { ...list.filters, limit: PAGE, before: list.last.id } });
    if (shown !== list) return;
    const rows = calls.map(callRow);
    list.body.append(...rows);
    labelCells(list.table);
    showMore(list, calls);
    // Focus moves to the first call just loaded (or the last one shown): the button may be gone.
    const target = rows[0] || list.body.rows[list.body.rows.length - 1];
    target.tabIndex = -1;
    target.focus();
  } catch (error) {
    toast(interpolate(gettext("Could not load more tool calls: %(why)s"), { why: error.message }, true), "bad");
  } finally {
    list.more.disabled = false;
    list.more.textContent = gettext("Load more");
  }
}

/** After a page of `list`: its last call, how many are shown, Load more while a page came back full. */
function showMore(list, calls) {
  if (calls.length) list.last = calls[calls.length - 1];
  const full = calls.length === PAGE;
  list.more.hidden = !full;
  const count = list.body.rows.length;
  const text = full
    ? ngettext("%(count)s call shown, newest first; more to load.", "%(count)s calls shown, newest first; more to load.", count)
    : ngettext("%(count)s call shown: every one that matches.", "%(count)s calls shown: every one that matches.", count);
  list.count.textContent = interpolate(text, { count }, true);
}

function callRow(call) {
  const when = dateTime(call.started_at);
  return h(
    "tr",
    { dataset: { status: call.status } },
    h("td", { class: "nowrap" }, call.session_id ? h("a", { href: `/sessions/${call.session_id}/`, title: interpolate(gettext("Open session %(session_id)s"), { session_id: call.session_id }, true) }, when) : when),
    h("td", {}, call.user || h("span", { class: "muted" }, "—")),
    h("td", {}, call.agent, call.adk_agent && call.adk_agent !== call.agent ? h("div", { class: "muted small" }, call.adk_agent) : null),
    h("td", { class: "tool", title: call.tool_full_name || call.tool_name }, h("code", {}, call.tool_name), toolsetOf(call) ? h("div", { class: "muted small" }, toolsetOf(call)) : null),
    h("td", {}, statusBadge(call.status)),
    h("td", { class: "num" }, duration(call.duration_ms)),
    h("td", { class: "small decided" }, decision(call)),
    h("td", { class: "small rule" }, call.access_rule || h("span", { class: "muted" }, "—")),
    h(
      "td",
      { class: "call-cell" },
      details("args", call.args),
      call.result_summary ? details("result", call.result_summary) : null,
      // What the tool returned, when a callback changed it before the model read it.
      call.raw_result_summary ? details(gettext("tool's own result"), call.raw_result_summary) : null,
    ),
  );
}

/** Who decided a held call and when; "nobody" for one that expired; else a dash. */
function decision(call) {
  if (!call.decided_at) return h("span", { class: "muted" }, "—");
  const who = call.decided_by ? interpolate(gettext("by %(decided_by)s"), { decided_by: call.decided_by }, true) : gettext("by nobody");
  return h("span", { title: `${call.status} ${who}` }, who, h("div", { class: "muted" }, dateTime(call.decided_at)));
}

function toolsetOf(call) {
  const full = call.tool_full_name || "";
  return full.endsWith(`.${call.tool_name}`) ? full.slice(0, -call.tool_name.length - 1) : "";
}

function details(label, value) {
  return h(
    "details",
    {},
    h("summary", {}, h("span", { class: "muted" }, `${label} `), inline(value, 48)),
    h("pre", { class: "json" }, typeof value === "string" ? value : json(value)),
  );
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  keepInUrl();
  load();
});
form.addEventListener("reset", () => {
  setTimeout(() => {
    keepInUrl();
    load();
  });
});

await statusOptions();
fromUrl();
load();
