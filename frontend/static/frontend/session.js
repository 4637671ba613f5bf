// A session: the timeline (REST backlog, then the websocket from the last seq),
// the composer, and the side panels (tools, toolsets, state by scope, artifacts).

import { api, ApiError } from "./api.js";
import { Attachments } from "./attach.js";
import { showClosedNotice, takeDraft } from "./closed.js";
import { clear, debounce, empty, failure, h, loading, toast } from "./dom.js";
import { History } from "./history.js";
import { gettext, gettext_noop, interpolate } from "./i18n.js";
import { onRequestFrame } from "./inboxfeed.js";
import { bindInspector } from "./inspector.js";
import { showModelPicker } from "./modelpicker.js";
import { showArtifacts, showState, showTools } from "./panels.js";
import { PromptPicker } from "./promptpicker.js";
import { bindArtifactChips } from "./preview.js";
import { listRequests, requestKey, requestPart } from "./requests.js";
import { refusalText, restCode } from "./refusals.js";
import { showOwnerBanner, ownerName } from "./senders.js";
import { followTitle, showSessionTitle } from "./sessiontitle.js";
import { bindShare } from "./share.js";
import { initSidebar } from "./sidebar.js";
import { showIntro } from "./starters.js";
import { bindIndicator, Stream } from "./stream.js";
import { Timeline } from "./timeline.js";
import { bindTraces } from "./trace.js";
import { TurnControls } from "./turncontrols.js";
import { TurnQueue } from "./queue.js";
import { ToolsetsPanel } from "./toolsets.js";

const root = document.getElementById("session-page");
const sessionId = root.dataset.session;
const el = (id) => document.getElementById(id);

const runs = new Map(); // run id -> the run ({id, status, waiting_for}), newest last, for the status line
const seenArtifacts = new Map(); // name -> latest version, from the events
// Call id -> the timeline's place for its request (the card of the paused call): a
// confirmation's or credential request's call id, and a long-running call's own.
const slots = new Map();
let session = null;
let stream = null;
let live = false; // the backlog is drawn: events now happen as they arrive

bindShare(sessionId);

const timeline = new Timeline(el("timeline"), el("timeline-scroll"), {
  onState: debounce(() => loadState(), 250),
  onArtifacts: (delta) => {
    for (const [name, version] of Object.entries(delta)) seenArtifacts.set(name, version);
    refreshArtifacts();
  },
  onPending: (callId, entry) => {
    if (!slots.has(callId)) slots.set(callId, { kind: "call", card: entry.card, outcome: entry.answer, toolName: entry.name, args: entry.args, runId: entry.runId, shown: null });
    refreshRequests();
  },
  onRequest: (entry) => {
    entry.shown = null; // the timeline just drew it: draw the request again
    slots.set(entry.callId, entry);
    refreshRequests();
  },
  onRun: (run, kind) => {
    noteRun(run);
    turnQueue.refresh(); // the queue moved on: read it again
    renderRunStatus();
    // An answer given elsewhere (another tab, the inbox, an expiry) resumes a run.
    if (kind === "run_finished" && slots.size) refreshRequests();
  },
  // Closed in another tab, or by staff: Edit, Regenerate and uploads go at once.
  onClosed: () => {
    if (live && !(session && session.closed_at)) markClosed();
  },
  onToolsChanged: (event) => {
    // The backlog's changes are already in the first loads; live ones are news.
    if (!live) return;
    loadTools({ changed: true });
    if (event.toolsets) toolsets.apply(event.toolsets, { text: event.text || "", when: event.ts });
  },
});

async function init() {
  clear(el("timeline-state"), loading(gettext("Loading the conversation…")));
  backlog.prefetch().catch(() => {}); // the latest events beside the session; open() draws them
  try {
    session = await api(`/api/sessions/${encodeURIComponent(sessionId)}/`);
  } catch (error) {
    showMissing(error);
    return;
  }
  showSessionTitle(session, el("session-title"));
  el("session-sub").textContent = interpolate(gettext("%(app_name)s · session %(id)s · started %(created_at)s"), { app_name: session.agent || session.app_name, id: session.id.slice(0, 8), created_at: new Date(session.created_at).toLocaleString() }, true);
  // A staff tryout of an agent's unpublished draft: everyone else runs the published agent.
  if (session.draft) el("session-sub").prepend(h("span", { class: "badge wait", id: "draft-badge", title: gettext("This session tries the agent's unpublished draft; everyone else uses the published version.") }, gettext("Draft")), " ");
  if (session.last_run) noteRun(session.last_run);
  turnQueue.load(); // the turns waiting: Stop and the list below the composer
  renderRunStatus();
  timeline.owner = ownerName(session);
  controls.owner = ownerName(session);
  showOwnerBanner(el("timeline-scroll"), session);
  const draft = takeDraft(sessionId); // a closed session's unsent message
  if (draft) input.value = draft;
  showClosed();
  showModelPicker({ sessionId, box: el("model-picker") });
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
        ? empty(gettext("No such session"), gettext("It does not exist, or it is not yours."))
        : failure(error, () => window.location.reload()),
      h("p", {}, h("a", { href: "/" }, gettext("Back to your sessions"))),
    ),
  );
}

// The latest events first; older ones a page at a time as the reader scrolls up.
const backlog = new History(timeline, sessionId);

async function loadBacklog() {
  await backlog.open();
  revealPending();
}

/** Never hide a pending request: page back until each is drawn, or the start. */
async function revealPending() {
  let pending;
  try {
    const lists = await Promise.all([
      listRequests({ session: sessionId, status: "pending" }),
      listRequests({ session: sessionId, status: "pending", mine: 1 }),
    ]);
    pending = lists.flat();
  } catch {
    return; // loadRequests() says what went wrong, when there is something to show
  }
  while (pending.some((request) => !slotFor(request, new Set())) && (await backlog.loadOlder())) {
    // each page's requests join `slots` as the timeline draws them
  }
}

function showTimelineState() {
  if (hasConversation()) {
    clear(el("timeline-state"));
    return;
  }
  // What the agent does, its tools and starters (starters.js), until the first event.
  showIntro({ box: el("timeline-state"), session, isEmpty: () => !hasConversation(), onStart: sendStarter });
}

/** Whether the timeline shows more than the session's closing: an empty session
 * closed still introduces its agent. */
function hasConversation() {
  return Boolean(el("timeline").querySelector(":scope > li:not(.kind-session_closed)"));
}

function sendStarter(text) {
  input.value = text;
  form.requestSubmit();
}

function connect() {
  stream = new Stream(`/ws/sessions/${sessionId}/`, {
    after: timeline.lastSeq,
    onFrame,
  });
  const indicate = bindIndicator(stream);
  stream.onStatus = (status, detail) => {
    indicate(status, detail);
    if (status === "reconnecting" || status === "closed") giveBackUnconfirmed();
  };
  stream.connect();
}

function onFrame(frame) {
  switch (frame.type) {
    case "event":
      timeline.apply(frame);
      titleFollower(frame); // the first message names the session: header and sidebar
      if (frame.seq !== null) showTimelineState();
      else clear(el("timeline-state"));
      return;
    case "ack":
      if (frame.ref) outbox.delete(frame.ref);
      if (frame.run) noteRun(frame.run);
      for (const run of frame.cancelled || []) noteRun(run);
      turnQueue.refresh();
      renderRunStatus();
      return;
    case "access_changed":
      loadTools({ changed: true });
      return;
    case "lagged":
      // The server replays every event after `after` itself; seq dedupes the overlap.
      return;
    case "error":
      refused(frame.error, takeRefused(frame.ref));
      return;
    default:
  }
}

const WAITING_FOR = { approval: gettext_noop("Waiting for approval"), credential: gettext_noop("Waiting for a credential"), result: gettext_noop("Waiting for a result") };

// How far along a run is: an ended run (succeeded, failed, waiting, cancelled) is
// never queued or running again (a person's answer starts a new run).
const RUN_STAGE = { queued: 0, running: 1 };
const stageOf = (status) => RUN_STAGE[status] ?? 2;

/** Keep a run's latest state, moved to the end: the newest run is the last one. A
 * REST answer (a regenerate's 202, say) may come after the socket's run_finished
 * for the same run: its older status never takes the run back. */
function noteRun(run) {
  const known = runs.get(run.id);
  runs.delete(run.id);
  const older = known && stageOf(run.status) < stageOf(known.status);
  runs.set(run.id, older ? { ...run, ...known } : { ...known, ...run });
}

/** The runs queued or running: the server's queue, less what the page saw end, and
 * what the page knows newer (an ack, a run_started), in the queue's order. */
function activeRuns() {
  const active = new Map(turnQueue.active().map((run) => [run.id, run]));
  for (const run of runs.values()) {
    if (run.status === "running" || run.status === "queued") active.set(run.id, { ...active.get(run.id), ...run });
  }
  return [...active.values()];
}

function renderRunStatus() {
  const box = el("run-status");
  const all = [...runs.values()];
  const active = activeRuns();
  const closed = Boolean(session && session.closed_at);
  controls.update(active, { closed, checking: turnQueue.checking });
  turnQueue.render({ closed });
  // The newest run says whether the session now waits for a person.
  const newest = all[all.length - 1];
  const waiting = newest && newest.status === "waiting" ? newest : null;
  if (!active.length && waiting) {
    box.dataset.active = "waiting";
    clear(box, h("span", { class: "badge wait" }, (WAITING_FOR[waiting.waiting_for] ? gettext(WAITING_FOR[waiting.waiting_for]) : null) || gettext("Waiting for a person")));
    return;
  }
  if (!active.length) {
    clear(box);
    box.dataset.active = "false";
    return;
  }
  box.dataset.active = "true";
  const running = active.some((run) => run.status === "running");
  clear(box, h("span", { class: "dots", "aria-hidden": "true" }, h("i"), h("i"), h("i")), running ? interpolate(gettext("%(agent)s is working…"), { agent: session.agent }, true) : gettext("Queued…"));
}

// Composer: Enter sends, Shift+Enter adds a line.

const form = el("composer");
const input = el("message");
const attachments = new Attachments(form, input, sessionId);
new PromptPicker(form, input); // `/` finds a prompt of the library (promptpicker.js)
bindArtifactChips(el("timeline"), sessionId);
bindInspector(el("timeline"), sessionId); // each event's seq opens it (inspector.js)
bindTraces(el("timeline")); // a run's line opens its spans (trace.js)
// Stop, Edit and Regenerate (turncontrols.js).
const controls = new TurnControls({
  sessionId,
  form,
  input,
  stopButton: el("stop-turn"),
  timeline: el("timeline"),
  stream: () => stream,
  onRun: (run) => {
    noteRun(run);
    renderRunStatus();
  },
  onStopAll: () => turnQueue.cancelAll({ running: true }),
});
// The turns waiting behind the running one, under the composer (queue.js).
const turnQueue = new TurnQueue({
  sessionId,
  after: form,
  stream: () => stream,
  ended: (id) => runs.has(id) && stageOf(runs.get(id).status) === 2,
  onChange: () => renderRunStatus(),
});

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

// Messages sent on the socket that the server has not yet acked: ref -> text. A
// refusal (an error frame with the message's ref) puts the text back in the box.
const outbox = new Map();
let sent = 0;

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const typed = input.value.trim();
  if ((!typed && !attachments.size) || attachments.busy || !session) return;
  let text = typed;
  try {
    // Attached files are uploaded first, and the message names them (attach.js).
    if (attachments.size) text = await attachments.message(typed);
  } catch {
    return; // attach.js said which file was refused; the text and other files stay
  }
  showComposerError("");
  const ref = `m${++sent}-${Date.now().toString(36)}`;
  if (stream && stream.send({ type: "message", text, ref })) {
    outbox.set(ref, text);
    input.value = "";
    input.style.height = "auto";
    return;
  }
  // No live socket right now: the REST API starts the turn; events arrive on reconnect.
  // The text stays in the box until the server has taken it.
  try {
    const run = await api(`/api/sessions/${sessionId}/messages/`, { method: "POST", body: { text } });
    if (input.value.trim() === typed) input.value = "";
    noteRun(run);
    turnQueue.refresh();
    renderRunStatus();
  } catch (error) {
    refused({ code: restCode(error), message: error.message }, "");
  }
});

/** The text of the refused message `ref` names (gone from the outbox), or "". */
function takeRefused(ref) {
  const text = (ref && outbox.get(ref)) || "";
  if (ref) outbox.delete(ref);
  return text;
}

/** Say why the server refused, in plain words, and give back what was typed. */
function refused(error, text) {
  if (text) giveBack(text);
  const words = refusalText(error);
  toast(words, "bad");
  if (error.code === "session_closed") {
    markClosed();
    return;
  }
  showComposerError(words);
}

/** Put a message's text back in the box, before anything typed since. */
function giveBack(text) {
  const now = input.value.trim();
  if (now === text) return;
  input.value = now ? `${text}\n\n${input.value}` : text;
  input.dispatchEvent(new Event("input"));
}

/** The socket dropped before the server acked a message: it may not have arrived. */
function giveBackUnconfirmed() {
  if (!outbox.size) return;
  for (const text of [...outbox.values()].reverse()) giveBack(text);
  outbox.clear();
  showComposerError(gettext("The connection dropped before the server confirmed your message. It is back in the box: send it again if it does not appear in the conversation."));
}

function showComposerError(words) {
  let note = el("composer-error");
  if (!words) {
    if (note) note.remove();
    return;
  }
  if (!note) {
    note = h("p", { id: "composer-error", class: "composer-error", role: "alert" });
    form.before(note);
  }
  note.textContent = words;
}

/** The session was closed elsewhere (another tab, staff): show it as closed. */
async function markClosed() {
  try {
    session = await api(`/api/sessions/${encodeURIComponent(sessionId)}/`);
  } catch {
    session = { ...session, closed_at: session.closed_at || new Date().toISOString() };
  }
  if (!session.closed_at) session = { ...session, closed_at: new Date().toISOString() };
  showClosed();
}

// Side panels (panels.js): tools, state by scope, artifacts; toolsets (toolsets.js).

const toolsets = new ToolsetsPanel({ box: el("toolsets"), count: el("toolsets-count"), note: el("toolsets-note"), sessionId });

function loadTools({ changed = false } = {}) {
  return showTools({ box: el("tools"), count: el("tools-count"), note: el("tools-note"), agent: session.agent, sessionId, changed });
}

function loadState() {
  return showState({ box: el("state"), sessionId });
}

function loadArtifacts() {
  return showArtifacts({ box: el("artifacts"), sessionId, seen: seenArtifacts, closed: Boolean(session && session.closed_at) });
}

const refreshArtifacts = debounce(() => loadArtifacts(), 250);

// Requests (requests.js): in the card of the call each pauses, why it waits and who
// may answer, the answer form when it is mine to give, and once answered, who, when
// and the comment. Refetched when the timeline draws or answers one, when a run ends,
// and on the inbox socket's frames (an answer or an expiry elsewhere).

const refreshRequests = debounce(() => loadRequests(), 150);

async function loadRequests() {
  if (!slots.size) return;
  let rows;
  try {
    // What I may see of this session: the requests I may answer, and my own.
    const lists = await Promise.all([
      listRequests({ session: sessionId, status: "all" }),
      listRequests({ session: sessionId, status: "all", mine: 1 }),
    ]);
    rows = new Map(lists.flat().map((request) => [request.id, request]));
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return; // no requests API here
    toast(interpolate(gettext("Could not load what this session waits for: %(error)s"), { error: error.message }, true), "bad");
    return;
  }
  const found = new Set();
  // Oldest first, so that the oldest request claims the oldest card when only the
  // tool and its arguments tell them apart.
  for (const request of [...rows.values()].sort((a, b) => a.id - b.id)) {
    const slot = slotFor(request, found);
    if (!slot) continue;
    found.add(slot);
    showRequest(slot, request);
  }
  for (const slot of slots.values()) {
    if (found.has(slot) || slot.answered || slot.kind === "call") continue;
    // Not mine to see (someone else's, that a group decides): the timeline's words stay.
    if (!slot.shown) fill(slot, h("p", { class: "waits" }, gettext("Waits for a decision by someone else: the tool's approver group, or the session's owner.")));
    slot.shown = "other";
  }
}

/** The timeline's place for a request: by the id of the call it pauses where the
 * request names it, else the first card not yet taken of its run, kind, tool and
 * arguments (a run that calls one tool twice alike pairs them in order). */
function slotFor(request, taken) {
  // A workflow tool node's approval: the timeline shows the node's request by its own id.
  if (request.call_id) return slots.get(request.call_id) || (request.resume_id && slots.get(request.resume_id)) || null;
  for (const slot of slots.values()) {
    if (taken.has(slot) || slot.kind !== request.kind || slot.toolName !== request.tool_name) continue;
    if (request.run && slot.runId && String(request.run) !== String(slot.runId)) continue;
    if (request.kind === "credential" || sameJson(slot.args, request.args)) return slot;
  }
  return null;
}

function sameJson(a, b) {
  const sorted = (value) => {
    if (Array.isArray(value)) return value.map(sorted);
    if (value && typeof value === "object") return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sorted(value[key])]));
    return value;
  };
  return JSON.stringify(sorted(a || {})) === JSON.stringify(sorted(b || {}));
}

/** Put the page's part of a request card in place, keeping the end in view. */
function fill(slot, ...nodes) {
  const stick = timeline.nearBottom();
  slot.outcome.replaceChildren(...nodes);
  if (stick) timeline.scrollToEnd();
}

function showRequest(slot, request) {
  const key = requestKey(request);
  if (slot.shown === key) return; // keep a form someone may be typing in
  slot.shown = key;
  slot.card.dataset.requestId = String(request.id);
  if (slot.box) {
    slot.box.dataset.status = request.status;
    // The request's own reason replaces the hint the event carried.
    const hint = slot.box.querySelector(":scope > .hint");
    if (hint) hint.hidden = Boolean(request.reason);
  }
  fill(
    slot,
    requestPart(request, {
      onAnswered: (run) => {
        if (run && run.id) noteRun(run);
        renderRunStatus();
      },
      onRefused: () => {
        slot.shown = null;
        refreshRequests();
      },
    }),
  );
}

onRequestFrame(() => refreshRequests());

// A closed session keeps its history and takes no new turns.

el("close-session").addEventListener("click", async () => {
  if (!window.confirm(gettext("Close this session? It joins the agent's memory and takes no new messages."))) return;
  try {
    session = await api(`/api/sessions/${sessionId}/close/`, { method: "POST" });
    showClosed();
  } catch (error) {
    toast(interpolate(gettext("Not closed: %(error)s"), { error: error.message }, true), "bad");
  }
});

function showClosed() {
  el("close-session").hidden = Boolean(session.closed_at);
  toolsets.setReadOnly(Boolean(session.closed_at));
  if (!session.closed_at) return;
  renderRunStatus(); // no Edit, no Regenerate
  el("artifact-upload")?.remove();
  // The side panels scroll: with no control left in them (no upload), the keyboard
  // still reaches them, as it does the timeline.
  root.querySelector("aside.side")?.setAttribute("tabindex", "0");
  const attach = el("attach-button");
  if (attach) attach.disabled = true;
  showComposerError("");
  // What was typed and not sent stays in view, and goes on to a new session.
  showClosedNotice(form, session, input.value.trim());
}

const titleFollower = followTitle(() => session, el("session-title"));
initSidebar({ conversation: true });
init();
