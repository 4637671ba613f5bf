// A session: the timeline (REST backlog, then the websocket from the last seq),
// the composer, and the side panels (tools, toolsets, state by scope, artifacts).

import { answerForm, waitsFor } from "./answers.js";
import { api, ApiError } from "./api.js";
import { decideButtons, expiry, outcome, waitsForApproval } from "./approvals.js";
import { answeredNote, credentialForm } from "./credentials.js";
import { clear, dateTime, debounce, empty, failure, h, loading, toast } from "./dom.js";
import { showArtifacts, showState, showTools } from "./panels.js";
import { bindIndicator, Stream } from "./stream.js";
import { Timeline } from "./timeline.js";
import { ToolsetsPanel } from "./toolsets.js";

const PAGE_SIZE = 5000;
const root = document.getElementById("session-page");
const sessionId = root.dataset.session;
const el = (id) => document.getElementById(id);

const runs = new Map(); // run id -> status, for the "working" line
const seenArtifacts = new Map(); // name -> latest version, from the events
const pending = new Map(); // call id -> its card, while a long-running call waits
const approvalCards = new Map(); // confirmation call id -> its request card (timeline entry)
const credentialCards = new Map(); // credential request call id -> its request card
let session = null;
let stream = null;
let live = false; // the backlog is drawn: events now happen as they arrive

const timeline = new Timeline(el("timeline"), el("timeline-scroll"), {
  onState: debounce(() => loadState(), 250),
  onArtifacts: (delta) => {
    for (const [name, version] of Object.entries(delta)) seenArtifacts.set(name, version);
    refreshArtifacts();
  },
  onPending: (callId, card) => {
    pending.set(callId, card);
    refreshCalls();
  },
  onRequest: (entry) => {
    entry.shown = null; // the timeline just drew it: draw the decision or form again
    if (entry.kind === "approval") {
      approvalCards.set(entry.callId, entry);
      refreshApprovals();
    } else {
      credentialCards.set(entry.callId, entry);
      refreshCredentials();
    }
  },
  onRun: (run, kind) => {
    runs.set(run.id, run.status);
    renderRunStatus();
    // A decision made elsewhere (another tab, the API, an expiry) resumes a run.
    if (kind === "run_finished" && approvalCards.size) refreshApprovals();
    if (kind === "run_finished" && credentialCards.size) refreshCredentials();
  },
  onToolsChanged: (event) => {
    // The backlog's changes are already in the first loads; live ones are news.
    if (!live) return;
    loadTools({ changed: true });
    if (event.toolsets) toolsets.apply(event.toolsets, { text: event.text || "", when: event.ts });
  },
});

async function init() {
  clear(el("timeline-state"), loading("Loading the conversation…"));
  try {
    session = await api(`/api/sessions/${encodeURIComponent(sessionId)}/`);
  } catch (error) {
    showMissing(error);
    return;
  }
  document.title = `${session.agent} · Toolcrib`;
  el("session-title").textContent = session.agent || session.app_name;
  el("session-sub").textContent = `Session ${session.id.slice(0, 8)} · started ${new Date(session.created_at).toLocaleString()}`;
  if (session.last_run) runs.set(session.last_run.id, session.last_run.status);
  renderRunStatus();
  showClosed();
  loadTools();
  loadState();
  loadArtifacts();
  try {
    await loadBacklog();
  } catch (error) {
    clear(el("timeline-state"), failure(error, () => window.location.reload()));
    toolsets.load();
    return;
  }
  // After the backlog: the list is at least as new as it, and the socket brings the rest.
  toolsets.load();
  showTimelineState();
  live = true;
  connect();
  el("message").focus();
}

function showMissing(error) {
  const notFound = error instanceof ApiError && error.status === 404;
  clear(
    root,
    h(
      "div",
      { class: "page narrow" },
      notFound
        ? empty("No such session", "It does not exist, or it is not yours.")
        : failure(error, () => window.location.reload()),
      h("p", {}, h("a", { href: "/" }, "Back to your sessions")),
    ),
  );
}

async function loadBacklog() {
  for (;;) {
    const frames = await api(`/api/sessions/${sessionId}/events/`, { query: { after: timeline.lastSeq, limit: PAGE_SIZE } });
    for (const frame of frames) timeline.apply(frame);
    if (frames.length < PAGE_SIZE) break;
  }
  timeline.scrollToEnd();
}

function showTimelineState() {
  if (timeline.size) {
    clear(el("timeline-state"));
    return;
  }
  clear(
    el("timeline-state"),
    empty(
      "Nothing here yet",
      `Say something to ${session.agent}. Its tool calls, hand-overs and state changes will appear here as they happen.`,
    ),
  );
}

function connect() {
  stream = new Stream(`/ws/sessions/${sessionId}/`, {
    after: timeline.lastSeq,
    onFrame,
  });
  stream.onStatus = bindIndicator(stream);
  stream.connect();
}

function onFrame(frame) {
  switch (frame.type) {
    case "event":
      timeline.apply(frame);
      if (frame.seq !== null) showTimelineState();
      else clear(el("timeline-state"));
      return;
    case "ack":
      runs.set(frame.run.id, frame.run.status);
      renderRunStatus();
      return;
    case "access_changed":
      loadTools({ changed: true });
      return;
    case "lagged":
      // The server replays every event after `after` itself; seq dedupes the overlap.
      return;
    case "error":
      toast(`The server refused a frame: ${frame.error.message}`, "bad");
      return;
    default:
  }
}

function renderRunStatus() {
  const box = el("run-status");
  const active = [...runs.values()].filter((status) => status === "running" || status === "queued");
  if (!active.length) {
    clear(box);
    box.dataset.active = "false";
    return;
  }
  box.dataset.active = "true";
  const running = active.includes("running");
  clear(box, h("span", { class: "dots", "aria-hidden": "true" }, h("i"), h("i"), h("i")), running ? `${session.agent} is working…` : "Queued…");
}

// Composer: Enter sends, Shift+Enter adds a line.

const form = el("composer");
const input = el("message");

input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    form.requestSubmit();
  }
});
input.addEventListener("input", () => {
  input.style.height = "auto";
  input.style.height = `${Math.min(input.scrollHeight, 200)}px`;
});

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (!text || !session) return;
  input.value = "";
  input.style.height = "auto";
  if (stream && stream.send({ type: "message", text })) return;
  // No live socket right now: the REST API starts the turn; events arrive on reconnect.
  try {
    const run = await api(`/api/sessions/${sessionId}/messages/`, { method: "POST", body: { text } });
    runs.set(run.id, run.status);
    renderRunStatus();
  } catch (error) {
    input.value = text;
    toast(`Not sent: ${error.message}`, "bad");
  }
});

// Side panels (panels.js): tools, state by scope, artifacts; toolsets (toolsets.js).

const toolsets = new ToolsetsPanel({ box: el("toolsets"), count: el("toolsets-count"), note: el("toolsets-note"), sessionId });

function loadTools({ changed = false } = {}) {
  return showTools({ box: el("tools"), count: el("tools-count"), note: el("tools-note"), agent: session.agent, changed });
}

function loadState() {
  return showState({ box: el("state"), sessionId });
}

function loadArtifacts() {
  return showArtifacts({ box: el("artifacts"), sessionId, seen: seenArtifacts });
}

const refreshArtifacts = debounce(() => loadArtifacts(), 250);

// Long-running calls: who they wait for, and the answer form when it is mine to give.

const refreshCalls = debounce(() => loadCalls(), 200);

async function loadCalls() {
  let calls;
  let mine;
  try {
    [calls, mine] = await Promise.all([api(`/api/sessions/${sessionId}/calls/`), api("/api/calls/")]);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return; // no calls API here
    toast(`Could not load waiting calls: ${error.message}`, "bad");
    return;
  }
  const answerable = new Set(mine.map((call) => call.call_id));
  for (const call of calls) {
    const card = pending.get(call.call_id);
    if (!card) continue;
    if (card.card.dataset.status !== "pending") {
      pending.delete(call.call_id); // its result arrived meanwhile
      continue;
    }
    if (call.status !== "pending") {
      card.answer.replaceChildren(h("p", { class: "muted small" }, `Answered by ${call.answered_by || "someone"}.`));
      continue;
    }
    const waits = h("p", { class: "waits" }, waitsFor(call));
    if (!answerable.has(call.call_id)) {
      card.answer.replaceChildren(waits);
      continue;
    }
    const onAnswered = (run) => {
      runs.set(run.id, run.status);
      renderRunStatus();
    };
    card.answer.replaceChildren(waits, answerForm(call, onAnswered));
  }
}

// Approvals: Approve / Reject when the call is mine to decide, else who it waits
// for; once decided, the outcome and who decided (the Approval, by call id).

const refreshApprovals = debounce(() => loadApprovals(), 200);

/** Put the page's part of a request card in place, keeping the end in view. */
function fill(entry, ...nodes) {
  const stick = timeline.nearBottom();
  entry.outcome.replaceChildren(...nodes);
  if (stick) timeline.scrollToEnd();
}

async function loadApprovals() {
  let rows;
  try {
    rows = await api("/api/approvals/", { query: { session: sessionId } });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return; // no approvals API here
    toast(`Could not load approvals: ${error.message}`, "bad");
    return;
  }
  const byCall = new Map(rows.filter((row) => row.session === sessionId).map((row) => [row.call_id, row]));
  for (const entry of approvalCards.values()) showApproval(entry, byCall.get(entry.callId));
}

function showApproval(entry, approval) {
  if (!approval) {
    // Not mine to decide (an approver group's, or staff looking at someone's session).
    if (!entry.answered) {
      fill(entry, h("p", { class: "waits" }, "Waits for a decision by someone else: the tool's approver group, or the session's owner."));
    }
    return;
  }
  const shown = `${approval.id}:${approval.status}`;
  if (entry.shown === shown) return; // keep buttons a click may be using
  entry.shown = shown;
  entry.card.dataset.approvalId = String(approval.id);
  if (approval.status !== "pending") {
    entry.card.dataset.status = approval.status;
    fill(entry, outcome(approval));
    return;
  }
  const waits = h("p", { class: "waits" }, waitsForApproval(approval), " ", expiry(approval));
  if (approval.may_decide === false) {
    // My own request, which an approver group decides: shown, not mine to decide.
    fill(entry, waits);
    return;
  }
  const buttons = decideButtons(approval, {
    onDecided: (run) => {
      runs.set(run.id, run.status);
      renderRunStatus();
    },
    onRefused: () => {
      entry.shown = null;
      refreshApprovals();
    },
  });
  fill(entry, waits, buttons);
}

// Credential requests: the answer form for the session's owner (the only one who
// may answer); once answered, when. Staff looking on keep the timeline's words.

const refreshCredentials = debounce(() => loadCredentialRequests(), 200);

async function loadCredentialRequests() {
  let rows;
  try {
    rows = await api("/api/auth-requests/");
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return; // no credentials API here
    toast(`Could not load credential requests: ${error.message}`, "bad");
    return;
  }
  const byCall = new Map(rows.filter((row) => row.session === sessionId).map((row) => [row.call_id, row]));
  for (const entry of credentialCards.values()) showCredentialRequest(entry, byCall.get(entry.callId));
}

function showCredentialRequest(entry, request) {
  if (!request) return;
  const shown = `${request.id}:${request.status}`;
  if (entry.shown === shown) return; // keep a form someone may be typing in
  entry.shown = shown;
  if (request.status !== "pending") {
    fill(entry, answeredNote(request));
    return;
  }
  const form = credentialForm(request, {
    onAnswered: (run) => {
      runs.set(run.id, run.status);
      renderRunStatus();
    },
    onRefused: () => {
      entry.shown = null;
      refreshCredentials();
    },
  });
  fill(entry, form);
}

// A closed session keeps its history and takes no new turns.

el("close-session").addEventListener("click", async () => {
  if (!window.confirm("Close this session? It joins the agent's memory and takes no new messages.")) return;
  try {
    session = await api(`/api/sessions/${sessionId}/close/`, { method: "POST" });
    showClosed();
  } catch (error) {
    toast(`Not closed: ${error.message}`, "bad");
  }
});

function showClosed() {
  el("close-session").hidden = Boolean(session.closed_at);
  toolsets.setReadOnly(Boolean(session.closed_at));
  if (!session.closed_at) return;
  form.hidden = true;
  const note = h("p", { class: "closed-note", id: "closed-note" }, `This session was closed ${dateTime(session.closed_at)}; it is in the agent's memory and takes no new messages.`);
  form.after(note);
}

init();
