// Overview: tool calls over time by outcome, slowest tools, denials, approvals
// waiting, tokens by user and agent. The server aggregates the tool calls
// (GET /api/tool-calls/summary/), outcome groups included, and charts.js draws them.

import { api, ApiError } from "./api.js";
import { barList, rangeBars, stackedColumns } from "./charts.js";
import { ago, clear, duration, empty, failure, h, loading } from "./dom.js";
import { gettext, gettext_noop, interpolate } from "./i18n.js";

const RANGES = {
  "24h": { hours: 24, bucket: "1h", bucketHours: 1, label: gettext_noop("last 24 hours") },
  "7d": { hours: 24 * 7, bucket: "6h", bucketHours: 6, label: gettext_noop("last 7 days") },
  "30d": { hours: 24 * 30, bucket: "1d", bucketHours: 24, label: gettext_noop("last 30 days") },
};
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
  const { hours, bucket, label } = RANGES[range];
  el("overview-range-label").textContent = interpolate(gettext("Showing the %(label)s."), { label: gettext(label) }, true);
  const since = new Date(Date.now() - hours * 3600 * 1000);
  for (const id of ["chart-calls", "chart-slow", "chart-denied"]) clear(el(id), loading());
  clear(el("kpis"));
  loadApprovals();
  loadTokens(since);
  let summary;
  try {
    summary = await api("/api/tool-calls/summary/", { query: { since: since.toISOString(), bucket } });
  } catch (error) {
    for (const id of ["chart-calls", "chart-slow", "chart-denied"]) clear(el(id), failure(error, load));
    return;
  }
  renderKpis(summary.kpis);
  renderCalls(summary);
  renderSlowest(summary.slowest);
  renderDenials(summary.denials);
}

function renderKpis(kpis) {
  const kpi = (key, label, value, tone = "") =>
    h("div", { class: `kpi ${tone}`.trim(), dataset: { kpi: key } }, h("div", { class: "value" }, value), h("div", { class: "label" }, label));
  clear(
    el("kpis"),
    kpi("calls", gettext("Tool calls"), String(kpis.calls)),
    kpi("failed", interpolate(gettext("Failed, of %(ran)s that ran"), { ran: kpis.ran }, true), kpis.ran ? `${Math.round((kpis.failed / kpis.ran) * 100)}%` : "—", kpis.failed ? "bad" : ""),
    kpi("denied", gettext("Denied"), String(kpis.denied), kpis.denied ? "bad" : ""),
    kpi("approved", gettext("Approved"), String(kpis.approved)),
    kpi("rejected", gettext("Rejected"), String(kpis.rejected)),
    kpi("expired", gettext("Expired, undecided"), String(kpis.expired)),
    kpi("awaiting", gettext("Awaiting approval"), String(kpis.awaiting)),
    kpi("p95", gettext("p95 duration, to its bucket"), kpis.p95_ms === null ? "—" : `≤ ${duration(kpis.p95_ms)}`),
    kpi("tools", gettext("Distinct tools"), String(kpis.tools)),
  );
}

/** `toolset.tool` without its toolset: the full name is in the row's tooltip. */
function shortName(fullName) {
  return fullName.includes(".") ? fullName.slice(fullName.indexOf(".") + 1) : fullName;
}

function renderCalls(summary) {
  if (summary.buckets.every((bucket) => Object.keys(bucket.counts).length === 0)) {
    clear(el("chart-calls"), empty(gettext("No tool calls in this period"), gettext("Start a session and ask an agent something that needs a tool.")));
    return;
  }
  const { bucketHours } = RANGES[range];
  const format = new Intl.DateTimeFormat(undefined, bucketHours >= 24 ? { month: "short", day: "numeric" } : { hour: "2-digit", minute: "2-digit", ...(bucketHours > 1 ? { weekday: "short" } : {}) });
  const full = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  const buckets = summary.buckets.map((bucket) => {
    const at = new Date(bucket.start);
    return { label: format.format(at), title: full.format(at), values: bucket.counts };
  });
  const series = summary.groups.map(({ key, label }) => ({ key, label }));
  clear(el("chart-calls"), stackedColumns(buckets, series));
}

function renderSlowest(slowest) {
  if (!slowest.length) {
    clear(el("chart-slow"), empty(gettext("No tool ran in this period")));
    return;
  }
  const rows = slowest.map((row) => ({
    name: shortName(row.tool),
    low: row.p50_ms,
    high: row.p95_ms,
    text: `${duration(row.p50_ms)} / ${duration(row.p95_ms)}`,
    title: interpolate(gettext("%(tool)s: %(calls)s calls, p50 ≤ %(p50_ms)s, p95 ≤ %(p95_ms)s (each the upper bound of its latency bucket)"), { tool: row.tool, calls: row.calls, p50_ms: duration(row.p50_ms), p95_ms: duration(row.p95_ms) }, true),
  }));
  clear(el("chart-slow"), rangeBars(rows));
}

function renderDenials(denials) {
  if (!denials.length) {
    clear(el("chart-denied"), empty(gettext("No denials"), gettext("Nobody was refused a tool in this period.")));
    return;
  }
  const rows = denials.map((row) => {
    const name = `${row.user || "?"} → ${shortName(row.tool)}`;
    return { name, value: row.count, title: name };
  });
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
      clear(box, empty(gettext("Approvals are not switched on yet"), gettext("When tools wait for an approval, the waiting ones are counted here.")));
      return;
    }
    clear(box, failure(error, loadApprovals));
    return;
  }
  if (!waiting.length) {
    clear(box, empty(gettext("Nothing waiting"), gettext("No tool call waits for an approval you may give.")));
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
    h("p", { class: "big-number" }, h("strong", {}, String(waiting.length)), interpolate(gettext(" waiting · oldest %(oldest)s · "), { oldest: ago(oldest) }, true), h("a", { href: "/inbox/" }, gettext("open the inbox"))),
    barList([...counts].sort((a, b) => b[1] - a[1]).map(([name, value]) => ({ name, value, title: name })), { fill: "denied" }),
  );
}

async function loadTokens(since) {
  const box = el("chart-tokens");
  clear(box, loading());
  const day = since.toISOString().slice(0, 10);
  let byUser;
  let byAgent;
  let byModel;
  try {
    [byUser, byAgent, byModel] = await Promise.all([
      api("/api/usage/", { query: { group_by: "user", since: day } }),
      api("/api/usage/", { query: { group_by: "agent", since: day } }),
      api("/api/usage/", { query: { group_by: "model", since: day } }),
    ]);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      clear(box, empty(gettext("Token usage is not recorded yet"), gettext("Tokens by user and agent appear here once the usage API is on.")));
      return;
    }
    clear(box, failure(error, () => loadTokens(since)));
    return;
  }
  showCost(byUser, byAgent, byModel, day);
  if (!byUser.total.total_tokens) {
    clear(box, empty(gettext("No tokens used in this period"), gettext("Model calls count their tokens here (the offline demo model counts words).")));
    return;
  }
  const rows = (usage) =>
    usage.rows
      .filter((row) => row.total_tokens > 0)
      .sort((a, b) => b.total_tokens - a.total_tokens)
      .slice(0, 6)
      .map((row) => ({ name: row.key, value: row.total_tokens, text: row.total_tokens.toLocaleString(), title: interpolate(gettext("%(key)s: %(runs)s runs, %(prompt_tokens)s in, %(completion_tokens)s out"), { key: row.key, runs: row.runs, prompt_tokens: row.prompt_tokens.toLocaleString(), completion_tokens: row.completion_tokens.toLocaleString() }, true) }));
  clear(
    box,
    h("p", { class: "big-number" }, h("strong", {}, byUser.total.total_tokens.toLocaleString()), interpolate(gettext(" tokens in %(runs)s runs since %(day)s"), { runs: byUser.total.runs, day }, true)),
    h("div", { class: "split" }, h("div", {}, h("div", { class: "label" }, gettext("By user")), barList(rows(byUser))), h("div", {}, h("div", { class: "label" }, gettext("By agent")), barList(rows(byAgent)))),
  );
}

/** A money amount as people read it: 2 decimals, up to 6 for a small one. */
function money(amount) {
  const value = Number(amount);
  if (value === 0) return "0.00";
  const digits = Math.abs(value) >= 0.01 ? 2 : 6;
  return value.toLocaleString(undefined, { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function showCost(byUser, byAgent, byModel, day) {
  const box = el("chart-cost");
  if (!Number(byUser.total.cost)) {
    clear(box, empty(gettext("Nothing priced was used in this period"), gettext("Staff set each model's price per million tokens on the Models page; runs cost from then on.")));
    return;
  }
  const rows = (usage) =>
    usage.rows
      .filter((row) => Number(row.cost) > 0)
      .sort((a, b) => Number(b.cost) - Number(a.cost))
      .slice(0, 6)
      .map((row) => ({ name: row.key || gettext("(before models were counted)"), value: Number(row.cost), text: money(row.cost), title: interpolate(gettext("%(key)s: %(cost)s for %(total_tokens)s tokens in %(runs)s runs"), { key: row.key, cost: money(row.cost), total_tokens: row.total_tokens.toLocaleString(), runs: row.runs }, true) }));
  clear(
    box,
    h("p", { class: "big-number", id: "cost-total" }, h("strong", {}, money(byUser.total.cost)), interpolate(gettext(" spent in %(runs)s runs since %(day)s"), { runs: byUser.total.runs, day }, true)),
    h(
      "div",
      { class: "split" },
      h("div", { id: "cost-by-user" }, h("div", { class: "label" }, gettext("By user")), barList(rows(byUser))),
      h("div", { id: "cost-by-agent" }, h("div", { class: "label" }, gettext("By agent")), barList(rows(byAgent))),
      h("div", { id: "cost-by-model" }, h("div", { class: "label" }, gettext("By model")), barList(rows(byModel))),
    ),
  );
}

load();
