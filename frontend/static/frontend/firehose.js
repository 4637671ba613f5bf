// The firehose: every session's events, live, newest first, each with its session's
// user, filtered by agent, username and kind (the server filters; changing a filter
// reconnects).

import { clear, clock, empty, h, inline, statusWord } from "./dom.js";
import { gettext, ngettext, gettext_noop, interpolate } from "./i18n.js";
import { bindIndicator, Stream } from "./stream.js";

const MAX_ROWS = 300;
const form = document.getElementById("firehose-filters");
const box = document.getElementById("firehose");
const countLine = document.getElementById("firehose-count");
const pauseButton = document.getElementById("pause");
const FIELDS = ["agent", "user", "kinds"];

let stream = null;
let paused = false;
let held = [];
let seen = 0;
const rows = h("tbody", {});
const COLUMNS = [gettext_noop("Time"), gettext_noop("Kind"), gettext_noop("User"), gettext_noop("Author"), gettext_noop("Session"), gettext_noop("What")];
const table = h(
  "table",
  { class: "table cards", id: "firehose-table" },
  h("thead", {}, h("tr", {}, COLUMNS.map((title) => h("th", { scope: "col" }, gettext(title))))),
  rows,
);

function filters() {
  const values = {};
  for (const name of FIELDS) values[name] = form.elements[name].value.replace(/\s+/g, "");
  return values;
}

function connect() {
  if (stream) stream.close();
  stream = new Stream("/ws/firehose/", { query: filters(), onFrame });
  stream.onStatus = bindIndicator(stream);
  stream.connect();
  showEmpty();
}

function showEmpty() {
  if (rows.childElementCount) return;
  clear(box, empty(gettext("Waiting for events…"), gettext("Events of every session appear here as they happen. Start a session in another tab to see some.")));
}

function onFrame(frame) {
  if (frame.type !== "event") return;
  // Partial text is a display hint; the stored text follows it.
  if (frame.seq === null && !form.elements.partials.checked) return;
  seen += 1;
  if (paused) {
    held.push(frame);
    if (held.length > MAX_ROWS) held.shift();
  } else {
    add(frame, true);
  }
  updateCount();
}

function add(frame, fresh) {
  if (!rows.childElementCount) clear(box, table);
  rows.prepend(row(frame, fresh));
  while (rows.childElementCount > MAX_ROWS) rows.lastElementChild.remove();
}

function row(frame, fresh) {
  const event = frame.event;
  const tr = h(
    "tr",
    { class: `fh-row ${fresh ? "fresh" : ""}`.trim(), dataset: { kind: event.kind, session: frame.session } },
    h("td", { class: "nowrap" }, clock(event.ts)),
    h("td", {}, h("span", { class: "badge" }, event.kind), event.partial ? h("span", { class: "muted small" }, gettext(" partial")) : null),
    h("td", { class: "fh-user" }, frame.user || h("span", { class: "muted" }, "—")),
    h("td", {}, h("code", {}, event.author)),
    h("td", {}, frame.session ? h("a", { href: `/sessions/${frame.session}/`, title: frame.session }, frame.session.slice(0, 8)) : null, frame.seq ? h("span", { class: "muted small" }, ` #${frame.seq}`) : null),
    h("td", { class: "small" }, summary(event)),
  );
  [...tr.cells].forEach((cell, index) => (cell.dataset.label = gettext(COLUMNS[index])));
  return tr;
}

export function summary(event) {
  const calls = event.function_calls || [];
  const responses = event.function_responses || [];
  if (event.error) return `${event.error.code || "error"}: ${event.error.message}`;
  if (event.transfer) return `${event.transfer.from} → ${event.transfer.to}`;
  if (event.escalation) return interpolate(gettext("%(from)s escalated"), { from: event.escalation.from }, true);
  if (calls.length) return calls.map((call) => `${call.name}(${inline(call.args, 80)})`).join(", ");
  if (responses.length) return responses.map((r) => `${r.name} → ${r.status}: ${inline(r.response, 80)}`).join(", ");
  if (event.text) return inline(event.text, 160);
  if (event.run) return interpolate(gettext("run %(status)s"), { status: statusWord(event.run.status) }, true);
  if (event.state_delta) return interpolate(gettext("state %(state_delta)s"), { state_delta: inline(event.state_delta, 120) }, true);
  if (event.artifact_delta) return interpolate(gettext("artifacts %(artifact_delta)s"), { artifact_delta: inline(event.artifact_delta, 120) }, true);
  return "";
}

function updateCount() {
  countLine.textContent = interpolate(ngettext("%(seen)s event received%(held)s.", "%(seen)s events received%(held)s.", seen), { seen, held: paused && held.length ? interpolate(gettext(" · %(held)s held while paused"), { held: held.length }, true) : "" }, true);
}

pauseButton.addEventListener("click", () => {
  paused = !paused;
  pauseButton.setAttribute("aria-pressed", String(paused));
  pauseButton.textContent = paused ? gettext("Resume") : gettext("Pause");
  if (!paused) {
    for (const frame of held) add(frame, false);
    held = [];
  }
  updateCount();
});

document.getElementById("clear").addEventListener("click", () => {
  rows.replaceChildren();
  held = [];
  seen = 0;
  updateCount();
  showEmpty();
});

form.addEventListener("submit", (event) => {
  event.preventDefault();
  rows.replaceChildren();
  connect();
});

connect();
