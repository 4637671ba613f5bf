// Overview: tool calls over time by outcome, slowest tools, denials, approvals
// waiting, tokens by user and agent. Drawn from the API with charts.js; how each
// audit status counts (ran, failed, held for approval, ...) is outcomes.js's.

import { api, ApiError } from "./api.js";
import { barList, quantile, rangeBars, stackedColumns } from "./charts.js";
import { ago, clear, duration, empty, failure, h, loading } from "./dom.js";
import { failed, GROUPS, groupOf, ran } from "./outcomes.js";

const RANGES = {
  "24h": { hours: 24, bucketHours: 1, label: "last 24 hours" },
  "7d": { hours: 24 * 7, bucketHours: 6, label: "last 7 days" },
  "30d": { hours: 24 * 30, bucketHours: 24, label: "last 30 days" },
};
const SERIES = GROUPS.map(({ key, label }) => ({ key, label }));
const CALL_LIMIT = 50000;
const el = (id) => document.getElementById(id);
let range = "24h";

for (const button of document.querySelectorAll("#range [data-range]")) {
  button.addEventListener("click", () => {
    range = button.dataset.range;
    for (const other of document.querySelectorAll("#range [data-range]")) {
      other.setAttribute("aria-pressed", String(other === button));
    }
    load();
  });
}

async function load() {
  const { hours, label } = RANGES[range];
  el("overview-range-label").textContent = `Showing the ${label}.`;
  const since = new Date(Date.now() - hours * 3600 * 1000);
  for (const id of ["chart-calls", "chart-slow", "chart-denied"]) clear(el(id), loading());
  clear(el("kpis"));
  loadApprovals();
  loadTokens(since);
  let calls;
  try {
    calls = await api("/api/tool-calls/", { query: { since: since.toISOString(), limit: CALL_LIMIT } });
  } catch (error) {
    for (const id of ["chart-calls", "chart-slow", "chart-denied"]) clear(el(id), failure(error, load));
    return;
  }
  renderKpis(calls);
  renderCalls(calls, since);
  renderSlowest(calls);
  renderDenials(calls);
}

function renderKpis(calls) {
  const count = (status) => calls.filter((call) => call.status === status).length;
  // An approved call's run has a row of its own: count the call once, by that row.
  const total = calls.length - count("approved");
  const runs = calls.filter(ran);
  const failures = calls.filter(failed).length;
  const denied = count("denied");
  const p95 = quantile(runs.map((call) => call.duration_ms), 0.95);
  const kpi = (key, label, value, tone = "") =>
    h("div", { class: `kpi ${tone}`.trim(), dataset: { kpi: key } }, h("div", { class: "value" }, value), h("div", { class: "label" }, label));
  clear(
    el("kpis"),
    kpi("calls", "Tool calls", String(total)),
    kpi("failed", `Failed, of ${runs.length} that ran`, runs.length ? `${Math.round((failures / runs.length) * 100)}%` : "—", failures ? "bad" : ""),
    kpi("denied", "Denied", String(denied), denied ? "bad" : ""),
    kpi("approved", "Approved", String(count("approved"))),
    kpi("rejected", "Rejected", String(count("rejected"))),
    kpi("expired", "Expired, undecided", String(count("expired"))),
    kpi("awaiting", "Awaiting approval", String(count("awaiting_approval"))),
    kpi("p95", "p95 duration", runs.length ? duration(p95) : "—"),
    kpi("tools", "Distinct tools", String(new Set(calls.map(toolOf)).size)),
  );
}

function toolOf(call) {
  return call.tool_full_name || call.tool_name;
}

/** `toolset.tool` without its toolset: the full name is in the row's tooltip. */
function shortName(fullName) {
  return fullName.includes(".") ? fullName.slice(fullName.indexOf(".") + 1) : fullName;
}

function renderCalls(calls, since) {
  if (!calls.length) {
    clear(el("chart-calls"), empty("No tool calls in this period", "Start a session and ask an agent something that needs a tool."));
    return;
  }
  const { bucketHours, hours } = RANGES[range];
  const size = bucketHours * 3600 * 1000;
  const start = Math.floor(since.getTime() / size) * size;
  const count = Math.ceil(hours / bucketHours) + 1;
  const format = new Intl.DateTimeFormat(undefined, bucketHours >= 24 ? { month: "short", day: "numeric" } : { hour: "2-digit", minute: "2-digit", ...(bucketHours > 1 ? { weekday: "short" } : {}) });
  const full = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  const buckets = Array.from({ length: count }, (_, index) => {
    const at = new Date(start + index * size);
    return { label: format.format(at), title: full.format(at), values: {} };
  });
  for (const call of calls) {
    const index = Math.floor((new Date(call.started_at).getTime() - start) / size);
    if (index < 0 || index >= count) continue;
    const values = buckets[index].values;
    const group = groupOf(call.status);
    values[group] = (values[group] || 0) + 1;
  }
  clear(el("chart-calls"), stackedColumns(buckets, SERIES));
}

function renderSlowest(calls) {
  const byTool = new Map();
  for (const call of calls) {
    if (!ran(call)) continue; // refused, held or cached: the tool never ran
    const list = byTool.get(toolOf(call)) || [];
    list.push(call.duration_ms);
    byTool.set(toolOf(call), list);
  }
  if (!byTool.size) {
    clear(el("chart-slow"), empty("No tool ran in this period"));
    return;
  }
  const rows = [...byTool]
    .map(([name, durations]) => ({ name, low: quantile(durations, 0.5), high: quantile(durations, 0.95), n: durations.length }))
    .sort((a, b) => b.high - a.high)
    .slice(0, 8)
    .map((row) => ({ ...row, name: shortName(row.name), text: `${duration(row.low)} / ${duration(row.high)}`, title: `${row.name}: ${row.n} calls, p50 ${duration(row.low)}, p95 ${duration(row.high)}` }));
  clear(el("chart-slow"), rangeBars(rows));
}

function renderDenials(calls) {
  const denied = calls.filter((call) => call.status === "denied");
  if (!denied.length) {
    clear(el("chart-denied"), empty("No denials", "Nobody was refused a tool in this period."));
    return;
  }
  const counts = new Map();
  for (const call of denied) {
    const key = `${call.user || "?"} → ${shortName(toolOf(call))}`;
    counts.set(key, (counts.get(key) || 0) + 1);
  }
  const rows = [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([name, value]) => ({ name, value, title: name }));
  clear(el("chart-denied"), barList(rows, { fill: "denied" }));
}

async function loadApprovals() {
  const box = el("chart-approvals");
  clear(box, loading());
  let waiting;
  try {
    waiting = (await api("/api/requests/")).filter((request) => request.kind === "approval");
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      clear(box, empty("Approvals are not switched on yet", "When tools wait for an approval, the waiting ones are counted here."));
      return;
    }
    clear(box, failure(error, loadApprovals));
    return;
  }
  if (!waiting.length) {
    clear(box, empty("Nothing waiting", "No tool call waits for an approval you may give."));
    return;
  }
  const counts = new Map();
  for (const request of waiting) {
    const key = request.answer_group ? `${request.tool_name} · ${request.answer_group}` : request.tool_name;
    counts.set(key, (counts.get(key) || 0) + 1);
  }
  const oldest = waiting.reduce((first, request) => (request.created_at < first ? request.created_at : first), waiting[0].created_at);
  clear(
    box,
    h("p", { class: "big-number" }, h("strong", {}, String(waiting.length)), ` waiting · oldest ${ago(oldest)} · `, h("a", { href: "/inbox/" }, "open the inbox")),
    barList([...counts].sort((a, b) => b[1] - a[1]).map(([name, value]) => ({ name, value, title: name })), { fill: "denied" }),
  );
}

async function loadTokens(since) {
  const box = el("chart-tokens");
  clear(box, loading());
  const day = since.toISOString().slice(0, 10);
  let byUser;
  let byAgent;
  try {
    [byUser, byAgent] = await Promise.all([
      api("/api/usage/", { query: { group_by: "user", since: day } }),
      api("/api/usage/", { query: { group_by: "agent", since: day } }),
    ]);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      clear(box, empty("Token usage is not recorded yet", "Tokens by user and agent appear here once the usage API is on."));
      return;
    }
    clear(box, failure(error, () => loadTokens(since)));
    return;
  }
  if (!byUser.total.total_tokens) {
    clear(box, empty("No tokens used in this period", "Model calls count their tokens here (the offline demo model counts words)."));
    return;
  }
  const rows = (usage) =>
    usage.rows
      .filter((row) => row.total_tokens > 0)
      .sort((a, b) => b.total_tokens - a.total_tokens)
      .slice(0, 6)
      .map((row) => ({ name: row.key, value: row.total_tokens, text: row.total_tokens.toLocaleString(), title: `${row.key}: ${row.runs} runs, ${row.prompt_tokens.toLocaleString()} in, ${row.completion_tokens.toLocaleString()} out` }));
  clear(
    box,
    h("p", { class: "big-number" }, h("strong", {}, byUser.total.total_tokens.toLocaleString()), ` tokens in ${byUser.total.runs} runs since ${day}`),
    h("div", { class: "split" }, h("div", {}, h("div", { class: "label" }, "By user"), barList(rows(byUser))), h("div", {}, h("div", { class: "label" }, "By agent"), barList(rows(byAgent)))),
  );
}

load();
