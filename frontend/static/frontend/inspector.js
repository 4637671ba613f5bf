// The event inspector: any event of the timeline opens, in a dialog, what the server
// knows of it (GET /api/sessions/{id}/events/{seq}/inspect/, fetched on open): its
// ids, a model step's request and answer with tokens, a tool call's governance
// decision and timings, and the raw wire JSON. The timeline draws the buttons
// (`inspectButton`); the page binds them once (`bindInspector`).

import { copyButton } from "./clipboard.js";
import { clear, dateTime, duration, h, statusBadge, toDate } from "./dom.js";
import { FetchDialog } from "./fetchdialog.js";
import { jsonView } from "./jsonview.js";

/** A magnifier, drawn by app.css (no <svg> in the timeline: only text and boxes). */
function lensIcon() {
  return h("span", { class: "icon-lens", "aria-hidden": "true" });
}

/**
 * The button that opens event `seq` in the inspector: a magnifier, no "#12" chip in
 * the timeline's text; the seq is in its name and title, and in the inspector.
 */
export function inspectButton(seq) {
  return h(
    "button",
    { type: "button", class: "inspect-button", dataset: { inspect: String(seq) }, "aria-label": `Inspect event #${seq}`, title: `Inspect event #${seq}` },
    lensIcon(),
  );
}

const sheet = new FetchDialog({ id: "event-inspector", prefix: "inspector", className: "inspector" });

/** Open event `seq` of session `sessionId` in the inspector; `from` gets the focus back. */
export function inspectEvent({ sessionId, seq, from = null }) {
  return sheet.open({
    url: `/api/sessions/${encodeURIComponent(sessionId)}/events/${encodeURIComponent(seq)}/inspect/`,
    title: `Event #${seq}`,
    from,
    missing: "This event is not there (or not yours).",
    failed: "Cannot inspect it",
    show: (found) => showInspection(seq, found),
  });
}

function showInspection(seq, found) {
  const event = (found.event && found.event.event) || {};
  sheet.title.textContent = `Event #${seq} · ${event.kind || "event"}`;
  sheet.meta.textContent = [event.author ? `by ${event.author}` : "", dateTime(event.ts)].filter(Boolean).join(" · ");
  clear(
    sheet.body,
    found.model_step ? modelStep(found.model_step) : null,
    (found.tool_calls || []).length ? toolCalls(found.tool_calls) : null,
    ids(found.ids || {}),
    rawJson(found.event),
  );
}

function section(name, heading, ...children) {
  return h("section", { class: `inspector-section ${name}`, "aria-labelledby": `inspector-${name}` }, h("h3", { id: `inspector-${name}` }, heading), ...children);
}

/** A definition list of [label, value] pairs; empty values are left out. */
function facts(pairs, className = "") {
  const shown = pairs.filter(([, value]) => value !== null && value !== undefined && value !== "");
  return h("dl", { class: `facts ${className}`.trim() }, shown.map(([label, value]) => [h("dt", {}, label), h("dd", {}, value)]));
}

function tokensText(tokens) {
  if (!tokens) return null;
  const parts = [`${number(tokens.input)} in`, `${number(tokens.output)} out`];
  if (tokens.total !== undefined && tokens.total !== null) parts.push(`${number(tokens.total)} total`);
  return parts.join(" · ");
}

function number(value) {
  return value === null || value === undefined ? "—" : Number(value).toLocaleString();
}

/** What the model was offered (after governance) and what it answered. */
function modelStep(step) {
  const answer = step.answer || {};
  const tools = step.tools || [];
  const calls = answer.function_calls || [];
  return section(
    "model",
    "Model step",
    facts([
      ["Model", step.model],
      ["Agent", step.agent],
      ["Tokens", tokensText(step.tokens)],
      ["Duration", duration(step.duration_ms)],
      ["Contents", step.contents === undefined ? null : `${step.contents} sent`],
      ["Tools offered", tools.length ? h("ul", { class: "chips tools-offered" }, tools.map((name) => h("li", { class: "chip" }, toolName(name)))) : h("span", { class: "muted" }, "none")],
    ]),
    step.instruction
      ? h("details", { class: "instruction" }, h("summary", {}, `Instruction (${step.instruction.length.toLocaleString()} characters)`), h("pre", { class: "preview-text" }, step.instruction))
      : null,
    h("h4", {}, "Answer"),
    answer.text ? h("pre", { class: "preview-text answer-text" }, answer.text) : null,
    calls.length
      ? h("ul", { class: "answer-calls" }, calls.map(answerCall))
      : null,
    !answer.text && !calls.length ? h("p", { class: "muted" }, "No text and no call.") : null,
  );
}

/** A call the model answered with: its name, and its arguments when given. */
function answerCall(call) {
  const name = toolName(call);
  const args = call && typeof call === "object" ? call.args : null;
  return h("li", {}, h("code", {}, name), args ? jsonView(args, { label: `Arguments of ${name}` }) : null);
}

function toolName(tool) {
  return typeof tool === "string" ? tool : (tool && tool.name) || "?";
}

/** Each call this event made or answered: governance's decision, attempts, timings. */
function toolCalls(calls) {
  return section(
    "calls",
    calls.length === 1 ? "Tool call" : `Tool calls (${calls.length})`,
    calls.map((call) =>
      h(
        "article",
        { class: "inspected-call", dataset: { callId: call.call_id || "", status: call.status || "" } },
        h("h4", {}, h("code", {}, call.tool || "?"), " ", statusBadge(call.status)),
        facts([
          ["Outcome", call.status],
          ["Decision", call.decision],
          ["Rule", call.rule],
          ["Check", call.check],
          ["Decided by", call.decided_by],
          ["Attempts", call.attempts === undefined || call.attempts === null ? null : String(call.attempts)],
          ["Started", preciseTime(call.started_at)],
          ["Finished", preciseTime(call.finished_at)],
          ["Duration", duration(call.duration_ms)],
          ["Call id", call.call_id],
        ], "call-facts"),
        call.args ? h("div", {}, h("div", { class: "label" }, "Arguments"), jsonView(call.args, { label: "Arguments" })) : null,
        call.result_summary !== undefined && call.result_summary !== null && call.result_summary !== ""
          ? h("div", {}, h("div", { class: "label" }, "Result (what the model received)"), typeof call.result_summary === "string" ? h("pre", { class: "preview-text" }, call.result_summary) : jsonView(call.result_summary, { label: "Result" }))
          : null,
        // Only when a callback changed the tool's result before the model read it.
        call.raw_result_summary ? h("div", {}, h("div", { class: "label" }, "Tool's own result, before callbacks"), h("pre", { class: "preview-text" }, call.raw_result_summary)) : null,
      ),
    ),
  );
}

// Timings to the millisecond: a call's start and end are often within one second.
const PRECISE = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", fractionalSecondDigits: 3 });

function preciseTime(when) {
  const date = toDate(when);
  return date ? PRECISE.format(date) : null;
}

const ID_LABELS = [
  ["event_id", "Event"],
  ["invocation_id", "Invocation"],
  ["run_id", "Run"],
  ["session_id", "Session"],
];

/** The ids, each with a Copy button. */
function ids(found) {
  const rows = ID_LABELS.filter(([key]) => found[key]).map(([key, label]) => [label, found[key]]);
  for (const callId of found.call_ids || []) rows.push(["Call", callId]);
  return section(
    "ids",
    "Ids",
    h(
      "dl",
      { class: "facts ids" },
      rows.map(([label, value]) => [h("dt", {}, label), h("dd", {}, h("code", {}, value), " ", copyButton(() => value, { label: `Copy ${label.toLowerCase()} id` }))]),
    ),
  );
}

function rawJson(frame) {
  return section(
    "raw",
    "Wire JSON",
    h("div", { class: "raw-actions" }, copyButton(() => JSON.stringify(frame, null, 2), { label: "Copy JSON", className: "copy-json" })),
    jsonView(frame, { label: "The event as sent on the wire", className: "raw-json" }),
  );
}

/** Open the inspector from any inspect button in `list` (one listener for all). */
export function bindInspector(list, sessionId) {
  list.addEventListener("click", (event) => {
    const button = event.target.closest("[data-inspect]");
    if (!button || !list.contains(button)) return;
    event.preventDefault(); // a button in a card's <summary> must not fold it
    event.stopPropagation();
    inspectEvent({ sessionId, seq: Number(button.dataset.inspect), from: button });
  });
}
