// A run's trace: a waterfall of its spans (GET /api/runs/{id}/trace/, fetched on
// open) in a dialog, one row per span, indented by its parent, its bar placed by
// when it started and sized by how long it took; name, kind, agent and duration in
// words, errors marked, the slowest tool call marked; sorted by start or slowest
// first, filtered by kind; a row opens to its attributes. Also a run's stats in
// words for the run's line (`runStats`), and its Trace button (`traceButton`).

import { badge, clear, duration, h } from "./dom.js";
import { FetchDialog } from "./fetchdialog.js";
import { gettext, ngettext, interpolate } from "./i18n.js";
import { jsonView } from "./jsonview.js";

/** "gemini-2.5 · 1,204 tokens in, 88 out · 1.4 s · 2 model calls · 1 tool call". */
export function statsText(stats) {
  if (!stats) return "";
  const tokens = stats.tokens || {};
  return [
    stats.model || null,
    interpolate(gettext("%(input)s tokens in, %(output)s out"), { input: count(tokens.input), output: count(tokens.output) }, true),
    duration(stats.duration_ms),
    plural(stats.model_calls, (n) => ngettext("%(n)s model call", "%(n)s model calls", n)),
    plural(stats.tool_calls, (n) => ngettext("%(n)s tool call", "%(n)s tool calls", n)),
  ]
    .filter(Boolean)
    .join(" · ");
}

/** A run's stats as a line of text for its finished line, or null without stats. */
export function runStats(stats) {
  if (!stats) return null;
  return h("span", { class: "run-stats", dataset: { model: stats.model || "" } }, statsText(stats));
}

/** The button on a run's line that opens its trace. */
export function traceButton(runId) {
  return h("button", { type: "button", class: "trace-button link-button", dataset: { trace: runId }, title: gettext("The run's spans, as a waterfall") }, gettext("Trace"));
}

function count(value) {
  return value === null || value === undefined ? "—" : Number(value).toLocaleString();
}

/** "3 model calls": `words` is an ngettext() of "%(n)s …" for the value. */
function plural(value, words) {
  if (value === null || value === undefined) return null;
  return interpolate(words(value), { n: count(value) }, true);
}

const sheet = new FetchDialog({ id: "trace-view", prefix: "trace", className: "trace" });

/** Open run `runId`'s trace; `from` gets the focus back when it closes. */
export function showTrace({ runId, from = null }) {
  return sheet.open({
    url: `/api/runs/${encodeURIComponent(runId)}/trace/`,
    title: gettext("Trace"),
    from,
    missing: gettext("This run is not there (or not yours)."),
    failed: gettext("Cannot show its trace"),
    show: showWaterfall,
  });
}

function showWaterfall(trace) {
  const run = trace.run || {};
  const spans = trace.spans || [];
  sheet.title.textContent = interpolate(gettext("Trace of run %(id)s"), { id: String(run.id || "").slice(0, 8) }, true);
  sheet.meta.textContent = [
    run.agent,
    run.status,
    statsText({ model: run.model, tokens: run.tokens, duration_ms: run.duration_ms, model_calls: run.model_calls, tool_calls: run.tool_calls }),
  ]
    .filter(Boolean)
    .join(" · ");
  const body = sheet.body;
  if (!spans.length) {
    clear(body, h("p", { class: "muted" }, trace.traces === "off" ? gettext("Traces are off on this server: this run kept no spans.") : gettext("This run kept no spans.")));
    return;
  }
  const rows = layout(spans, run.duration_ms || 0);
  const list = h("ol", { class: "waterfall", "aria-label": gettext("Spans") });
  const view = { sort: "start", kind: "" };
  const draw = () => clear(list, arrange(rows, view).map((row) => row.element));
  clear(body, controls(rows, view, draw), slowestNote(rows), list);
  draw();
}

/** Each span with its depth, its bar's place, and its row. */
function layout(spans, turnMs) {
  const byId = new Map();
  const total = Math.max(1, turnMs, ...spans.map((span) => (span.offset_ms || 0) + (span.duration_ms || 0)));
  const slowest = slowestTool(spans);
  return spans.map((span, index) => {
    const parent = span.parent ? byId.get(span.parent) : null;
    const row = { span, index, depth: parent ? parent.depth + 1 : 0, slowest: span === slowest };
    byId.set(span.id, row);
    row.element = spanRow(row, total);
    return row;
  });
}

function slowestTool(spans) {
  let slowest = null;
  for (const span of spans) {
    if (span.kind === "tool" && (!slowest || (span.duration_ms || 0) > (slowest.duration_ms || 0))) slowest = span;
  }
  return slowest;
}

/** One span: a button (name, kind, agent, duration, error) that opens its attributes, and its bar. */
function spanRow(row, total) {
  const { span } = row;
  const error = span.status === "error";
  const left = ((span.offset_ms || 0) / total) * 100;
  const width = ((span.duration_ms || 0) / total) * 100;
  const attributes = h("div", { class: "span-attributes", id: `span-${row.index}-attributes`, hidden: true });
  const toggle = h(
    "button",
    { type: "button", class: "span-line", "aria-expanded": "false", "aria-controls": `span-${row.index}-attributes` },
    h("span", { class: "span-name" }, span.name),
    " ",
    h("span", { class: `span-kind kind-${span.kind}` }, span.kind),
    span.agent ? h("span", { class: "span-agent muted" }, span.agent) : null,
    error ? badge(gettext("error"), "bad") : null,
    row.slowest ? badge(gettext("slowest tool call"), "wait") : null,
    h("span", { class: "span-duration" }, duration(span.duration_ms)),
  );
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    // Drawn at the first opening: most rows are never opened.
    if (open && !attributes.firstChild) attributes.append(jsonView(span.attributes || {}, { label: interpolate(gettext("Attributes of %(name)s"), { name: span.name }, true) }));
    attributes.hidden = !open;
  });
  const bar = h("div", { class: "span-track", "aria-hidden": "true" }, h("div", { class: "span-bar" }));
  // Dynamic values: where the span starts and how long it lasts, in % of the turn.
  bar.firstChild.style.left = `${Math.min(left, 100)}%`;
  bar.firstChild.style.width = `${Math.max(Math.min(width, 100 - left), 0.4)}%`;
  const item = h(
    "li",
    { class: `span-row${error ? " error" : ""}${row.slowest ? " slowest" : ""}`, dataset: { kind: span.kind, depth: String(row.depth), status: span.status || "", ms: String(span.duration_ms || 0) } },
    toggle,
    bar,
    attributes,
  );
  item.style.setProperty("--depth", String(row.depth));
  return item;
}

/** The rows in the order and of the kind asked; flat (not indented) unless by start. */
function arrange(rows, view) {
  let shown = view.kind ? rows.filter((row) => row.span.kind === view.kind) : [...rows];
  if (view.sort === "slowest") shown = shown.sort((a, b) => (b.span.duration_ms || 0) - (a.span.duration_ms || 0));
  const nested = view.sort === "start" && !view.kind;
  for (const row of rows) row.element.classList.toggle("flat", !nested);
  return shown;
}

function controls(rows, view, draw) {
  const kinds = [...new Set(rows.map((row) => row.span.kind))];
  const kind = h("select", { id: "trace-kind" }, h("option", { value: "" }, gettext("All kinds")), kinds.map((name) => h("option", { value: name }, name)));
  const sort = h("select", { id: "trace-sort" }, h("option", { value: "start" }, gettext("By start")), h("option", { value: "slowest" }, gettext("Slowest first")));
  kind.addEventListener("change", () => {
    view.kind = kind.value;
    draw();
  });
  sort.addEventListener("change", () => {
    view.sort = sort.value;
    draw();
  });
  return h(
    "div",
    { class: "trace-controls" },
    h("label", { class: "trace-control" }, gettext("Kind "), kind),
    h("label", { class: "trace-control" }, gettext("Order "), sort),
    h("span", { class: "muted small" }, interpolate(ngettext("%(rows)s span", "%(rows)s spans", rows.length), { rows: rows.length }, true)),
  );
}

function slowestNote(rows) {
  const row = rows.find((item) => item.slowest);
  if (!row) return null;
  return h("p", { class: "trace-slowest small" }, gettext("Slowest tool call: "), h("strong", {}, row.span.name), ` (${duration(row.span.duration_ms)})`);
}

/** Open a run's trace from any Trace button in `list` (one listener for all). */
export function bindTraces(list) {
  list.addEventListener("click", (event) => {
    const button = event.target.closest("[data-trace]");
    if (!button || !list.contains(button)) return;
    showTrace({ runId: button.dataset.trace, from: button });
  });
}
