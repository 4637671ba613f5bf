// The event inspector: any event of the timeline opens, in a dialog, what the server
// knows of it (GET /api/sessions/{id}/events/{seq}/inspect/, fetched on open): its
// ids, a model step's request and answer with tokens, a tool call's governance
// decision and timings, and the raw wire JSON. The timeline draws the buttons
// (`inspectButton`); the page binds them once (`bindInspector`).

import { copyButton } from "./clipboard.js";
import { clear, dateTime, duration, h, statusBadge, toDate } from "./dom.js";
import { FetchDialog } from "./fetchdialog.js";
import { gettext, ngettext, gettext_noop, interpolate } from "./i18n.js";
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
    { type: "button", class: "inspect-button", dataset: { inspect: String(seq) }, "aria-label": interpolate(gettext("Inspect event #%(seq)s"), { seq }, true), title: interpolate(gettext("Inspect event #%(seq)s"), { seq }, true) },
    lensIcon(),
  );
}

const sheet = new FetchDialog({ id: "event-inspector", prefix: "inspector", className: "inspector" });

/** Open event `seq` of session `sessionId` in the inspector; `from` gets the focus back. */
export function inspectEvent({ sessionId, seq, from = null }) {
  return sheet.open({
    url: `/api/sessions/${encodeURIComponent(sessionId)}/events/${encodeURIComponent(seq)}/inspect/`,
    title: interpolate(gettext("Event #%(seq)s"), { seq }, true),
    from,
    missing: gettext("This event is not there (or not yours)."),
    failed: gettext("Cannot inspect it"),
    show: (found) => showInspection(seq, found),
  });
}

function showInspection(seq, found) {
  const event = (found.event && found.event.event) || {};
  sheet.title.textContent = interpolate(gettext("Event #%(seq)s · %(kind)s"), { seq, kind: event.kind || "event" }, true);
  sheet.meta.textContent = [event.author ? interpolate(gettext("by %(author)s"), { author: event.author }, true) : "", dateTime(event.ts)].filter(Boolean).join(" · ");
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
  const parts = [interpolate(gettext("%(input)s in"), { input: number(tokens.input) }, true), interpolate(gettext("%(output)s out"), { output: number(tokens.output) }, true)];
  if (tokens.total !== undefined && tokens.total !== null) parts.push(interpolate(gettext("%(total)s total"), { total: number(tokens.total) }, true));
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
    gettext("Model step"),
    facts([
      [gettext("Model"), step.model],
      [gettext("Agent"), step.agent],
      [gettext("Tokens"), tokensText(step.tokens)],
      [gettext("Duration"), duration(step.duration_ms)],
      [gettext("Contents"), step.contents === undefined ? null : interpolate(gettext("%(contents)s sent"), { contents: step.contents }, true)],
      [gettext("Tools offered"), tools.length ? h("ul", { class: "chips tools-offered" }, tools.map((name) => h("li", { class: "chip" }, toolName(name)))) : h("span", { class: "muted" }, gettext("none"))],
    ]),
    step.instruction
      ? h("details", { class: "instruction" }, h("summary", {}, interpolate(gettext("Instruction (%(instruction)s characters)"), { instruction: step.instruction.length.toLocaleString() }, true)), h("pre", { class: "preview-text" }, step.instruction))
      : null,
    h("h4", {}, gettext("Answer")),
    answer.text ? h("pre", { class: "preview-text answer-text" }, answer.text) : null,
    calls.length
      ? h("ul", { class: "answer-calls" }, calls.map(answerCall))
      : null,
    !answer.text && !calls.length ? h("p", { class: "muted" }, gettext("No text and no call.")) : null,
  );
}

/** A call the model answered with: its name, and its arguments when given. */
function answerCall(call) {
  const name = toolName(call);
  const args = call && typeof call === "object" ? call.args : null;
  return h("li", {}, h("code", {}, name), args ? jsonView(args, { label: interpolate(gettext("Arguments of %(name)s"), { name }, true) }) : null);
}

function toolName(tool) {
  return typeof tool === "string" ? tool : (tool && tool.name) || "?";
}

/** Each call this event made or answered: governance's decision, attempts, timings. */
function toolCalls(calls) {
  return section(
    "calls",
    calls.length === 1 ? gettext("Tool call") : interpolate(ngettext("Tool calls (%(count)s)", "Tool calls (%(count)s)", calls.length), { count: calls.length }, true),
    calls.map((call) =>
      h(
        "article",
        { class: "inspected-call", dataset: { callId: call.call_id || "", status: call.status || "" } },
        h("h4", {}, h("code", {}, call.tool || "?"), " ", statusBadge(call.status)),
        facts([
          [gettext("Outcome"), call.status],
          [gettext("Decision"), call.decision],
          [gettext("Rule"), call.rule],
          [gettext("Check"), call.check],
          [gettext("Decided by"), call.decided_by],
          [gettext("Attempts"), call.attempts === undefined || call.attempts === null ? null : String(call.attempts)],
          [gettext("Started"), preciseTime(call.started_at)],
          [gettext("Finished"), preciseTime(call.finished_at)],
          [gettext("Duration"), duration(call.duration_ms)],
          [gettext("Call id"), call.call_id],
        ], "call-facts"),
        call.args ? h("div", {}, h("div", { class: "label" }, gettext("Arguments")), jsonView(call.args, { label: gettext("Arguments") })) : null,
        call.result_summary !== undefined && call.result_summary !== null && call.result_summary !== ""
          ? h("div", {}, h("div", { class: "label" }, gettext("Result (what the model received)")), typeof call.result_summary === "string" ? h("pre", { class: "preview-text" }, call.result_summary) : jsonView(call.result_summary, { label: gettext("Result") }))
          : null,
        // Only when a callback changed the tool's result before the model read it.
        call.raw_result_summary ? h("div", {}, h("div", { class: "label" }, gettext("Tool's own result, before callbacks")), h("pre", { class: "preview-text" }, call.raw_result_summary)) : null,
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
  ["event_id", gettext_noop("Event")],
  ["invocation_id", gettext_noop("Invocation")],
  ["run_id", gettext_noop("Run")],
  ["session_id", gettext_noop("Session")],
];

/** The ids, each with a Copy button. */
function ids(found) {
  const rows = ID_LABELS.filter(([key]) => found[key]).map(([key, label]) => [gettext(label), found[key]]);
  for (const callId of found.call_ids || []) rows.push([gettext("Call"), callId]);
  return section(
    "ids",
    gettext("Ids"),
    h(
      "dl",
      { class: "facts ids" },
      rows.map(([label, value]) => [h("dt", {}, label), h("dd", {}, h("code", {}, value), " ", copyButton(() => value, { label: interpolate(gettext("Copy %(label)s id"), { label: label.toLowerCase() }, true) }))]),
    ),
  );
}

function rawJson(frame) {
  return section(
    "raw",
    gettext("Wire JSON"),
    h("div", { class: "raw-actions" }, copyButton(() => JSON.stringify(frame, null, 2), { label: gettext("Copy JSON"), className: "copy-json" })),
    jsonView(frame, { label: gettext("The event as sent on the wire"), className: "raw-json" }),
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
