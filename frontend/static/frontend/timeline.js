// The session timeline: one element per stored event (found by [data-seq]),
// function calls drawn as cards that their responses complete, model text that
// streams in from partial frames (seq null) and is replaced by the stored text.

import { badge, clock, duration, h, inline, json, statusBadge, statusWord } from "./dom.js";
import { gettext, gettext_noop, interpolate } from "./i18n.js";
import { jsonView } from "./jsonview.js";
import { copyButton } from "./clipboard.js";
import { liveMarkdown, renderMarkdown } from "./markdown.js";
import { humanHint } from "./requests.js";
import { inspectButton } from "./inspector.js";
import { runStats, traceButton } from "./trace.js";
import { senderNote } from "./senders.js";
import { turnErrorTitle } from "./refusals.js";

const REQUEST_CALLS = new Set(["adk_request_credential", "adk_request_confirmation"]);
// ADK 2.x: a workflow node asking a person (tools.md "Workflows").
const REQUEST_INPUT = "adk_request_input";

export class Timeline {
  /**
   * @param {HTMLElement} list an <ol> to fill.
   * @param {HTMLElement} scroller the element that scrolls.
   * @param {object} hooks onState(delta), onArtifacts(delta), onRun(run, kind),
   *   onToolsChanged(event), onPending(callId, entry): a long-running call waits for its
   *   result (entry.card, entry.answer: the slot for its request),
   *   onRequest(entry): a credential or approval request was shown, or answered
   *   (entry: callId, toolCallId, kind "approval" | "credential", card: the paused
   *   call's, box, outcome: the slot for the request's part, answered)
   */
  constructor(list, scroller, hooks = {}) {
    this.list = list;
    this.scroller = scroller;
    this.hooks = hooks;
    this.bySeq = new Map();
    this.calls = new Map();
    this.requests = new Map();
    this.streaming = new Map();
    this.runStarts = new Map();
    this.currentRun = null; // the id of the run the events being drawn belong to
    this.lastSeq = 0;
    this.firstSeq = Infinity;
    this.older = null; // while prepend() draws older events: {anchor}, else null
    this.batch = false; // while applyAll() draws a page
    this.branches = new Set(); // nested agents' branches already labelled
    this.orphans = new Map(); // call id -> a result drawn before its call: {card, response, event, seq}
    this.owner = ""; // the session owner's username: other senders are named
  }

  get size() {
    return this.bySeq.size;
  }

  /** Apply one event frame; returns false for a seq already shown. */
  apply(frame) {
    const event = frame.event;
    if (frame.seq === null || frame.seq === undefined) {
      if (event.kind === "text" && event.text) this.stream(event);
      return true;
    }
    if (this.bySeq.has(frame.seq)) return false;
    // Reading the layout per event would lay the page out again per event.
    const stick = !this.older && !this.batch && this.nearBottom();
    const element = this.render(frame.seq, event);
    this.bySeq.set(frame.seq, element);
    this.lastSeq = Math.max(this.lastSeq, frame.seq);
    this.firstSeq = Math.min(this.firstSeq, frame.seq);
    // Older events are history: the panels and the run status already show today's.
    if (!this.older) this.notify(event);
    if (stick) this.scrollToEnd();
    return true;
  }

  /** Draw a page of stored frames, reading the layout once rather than per frame. */
  applyAll(frames) {
    const stick = this.nearBottom();
    this.batch = true;
    try {
      for (const frame of frames) this.apply(frame);
    } finally {
      this.batch = false;
    }
    if (stick) this.scrollToEnd();
  }

  /**
   * Draw events older than every shown one (in seq order) above them, keeping what
   * the reader looks at where it is.
   */
  prepend(frames) {
    const { scroller } = this;
    const height = scroller.scrollHeight;
    const top = scroller.scrollTop;
    const run = this.currentRun;
    this.older = { anchor: this.list.querySelector(":scope > [data-seq]") };
    try {
      for (const frame of frames) this.apply(frame);
      if (this.orphans.size) this.joinOrphans();
    } finally {
      this.older = null;
      this.currentRun = run;
    }
    scroller.scrollTop = top + (scroller.scrollHeight - height);
  }

  /**
   * How many calls these frames answer or pause that neither they nor the timeline
   * show: a page that ends there splits a call from its result.
   */
  missingCalls(frames) {
    const known = new Set([...this.calls.keys(), ...this.requests.keys()]);
    const wanted = new Set();
    for (const { event } of frames) {
      for (const call of event.function_calls || []) {
        if (call.id) known.add(call.id);
        if (REQUEST_CALLS.has(call.name) && pausedCallId(call)) wanted.add(pausedCallId(call));
      }
      for (const response of event.function_responses || []) if (response.id) wanted.add(response.id);
    }
    return [...wanted].filter((id) => !known.has(id)).length;
  }

  notify(event) {
    const { onState, onArtifacts, onRun, onToolsChanged, onClosed } = this.hooks;
    if (event.state_delta && onState) onState(event.state_delta);
    if (event.artifact_delta && onArtifacts) onArtifacts(event.artifact_delta, event);
    if (event.run && onRun) onRun(event.run, event.kind);
    if (event.kind === "tools_changed" && onToolsChanged) onToolsChanged(event);
    if (event.kind === "session_closed" && onClosed) onClosed(event);
  }

  render(seq, event) {
    const blocks = [];
    const asked = this.mergeRequests(seq, event, blocks);
    const merged = this.mergeResponses(seq, event, blocks) || asked;
    this.addBlocks(event, blocks);
    const key = streamKey(event);
    // Live text streams only into the newest events, never into older ones.
    const streaming = this.older ? null : this.streaming.get(key);
    if (streaming && event.text) this.streaming.delete(key);
    if (event.kind === "run_finished" && !this.older) this.dropStreams(event.invocation_id);
    if (!blocks.length && merged) {
      // Only results of cards already shown: the first result's tag is the anchor.
      merged.dataset.seq = String(seq);
      return merged;
    }
    const item = h(
      "li",
      { class: `item kind-${event.kind} ${sideOf(event)}`, dataset: { seq: String(seq), kind: event.kind, ...(event.sender ? { sender: event.sender.username } : {}) } },
      blocks.length ? blocks : h("div", { class: "quiet" }, interpolate(gettext("%(kind)s from %(author)s"), { kind: event.kind, author: event.author }, true)),
    );
    // Its inspector: on a run's line, beside the line's words; else the item's corner.
    (item.querySelector(":scope > .divider > span") || item).append(inspectButton(seq));
    this.nest(item, event);
    if (streaming && event.text) streaming.element.replaceWith(item);
    else this.insert(item, seq);
    return item;
  }

  /**
   * An agent called as a tool (a single-turn sub-agent; an AgentTool, adopted) runs
   * on the branch `<agent>@<call id>`: its events are indented under the call, the
   * first of them labelled with the agent and who called it.
   */
  nest(item, event) {
    const segments = indent(item, event);
    if (!segments.length || this.branches.has(event.branch)) return;
    const [agent, callId] = splitSegment(segments[segments.length - 1]);
    this.branches.add(event.branch);
    if (/^\d+$/.test(callId)) {
      // A workflow's fan-out (ADK 2.x): its nodes run side by side, on branches
      // named by their run counter (`check@1`); a tool's branch names its call.
      item.prepend(h("div", { class: "nested-by" }, h("span", { class: "agent-chip" }, agent), gettext(" runs in parallel")));
      return;
    }
    const parent = segments.length > 1 ? splitSegment(segments[segments.length - 2])[0] : (this.calls.get(callId) || {}).author;
    item.prepend(h("div", { class: "nested-by" }, h("span", { class: "agent-chip" }, agent), parent ? interpolate(gettext(" called by %(parent)s"), { parent }, true) : gettext(" called as a tool")));
  }

  addBlocks(event, blocks) {
    switch (event.kind) {
      case "run_started":
      case "run_finished":
        blocks.push(this.runDivider(event));
        return;
      case "error":
        blocks.push(errorBox(event));
        return;
      case "node_output":
        blocks.push(nodeOutput(event.node));
        return;
      case "tools_changed":
        blocks.push(toolsChanged(event));
        return;
      case "session_closed":
        blocks.push(h("div", { class: "divider" }, h("span", {}, `${gettext("Session closed")} · ${clock(event.ts)}`)));
        return;
      default:
    }
    if (event.transfer) blocks.push(handoff("transfer", event.transfer));
    if (event.escalation) blocks.push(handoff("escalation", event.escalation));
    const toolCalls = (event.function_calls || []).filter((call) => !REQUEST_CALLS.has(call.name));
    if (toolCalls.length) blocks.push(...toolCalls.map((call) => this.callCard(event, call)));
    if (event.text) blocks.push(message(event, this.owner));
    if (event.artifact_delta) blocks.push(artifactChips(event.artifact_delta));
    const chips = event.state_delta ? stateChips(event.state_delta) : null;
    if (chips) blocks.push(chips);
    // A node's output on an event that shows more (a state change, a tool's answer):
    // shown too, unless it is the event's own text (an agent node's answer).
    if (event.node && event.node.output !== null && event.node.output !== undefined && !event.text) {
      blocks.push(nodeOutput(event.node));
    }
  }

  /**
   * A call as one line (tool, key argument, status, duration) that opens on a click
   * or Enter/Space to its arguments and result; what a person is asked (a request,
   * a long-running call's answer) sits below the line, never folded away.
   */
  callCard(event, call) {
    const long = (event.long_running_tool_ids || []).includes(call.id);
    const status = h("span", { class: "call-status" }, statusBadge("running"));
    const took = h("span", { class: "call-duration muted" });
    const result = h("div", { class: "call-result" }, h("span", { class: "muted" }, gettext("Waiting for the result…")));
    const answer = h("div", { class: "call-answer" });
    const details = h(
      "details",
      { class: "call-details" },
      callLine(call.name, call.args, long ? badge(gettext("long-running"), "wait") : null, status, took),
      h("div", { class: "call-author muted" }, interpolate(gettext("called by %(author)s · %(ts)s"), { author: event.author, ts: clock(event.ts) }, true)),
      h("div", { class: "call-args" }, h("div", { class: "label" }, gettext("Arguments")), argsTree(call.args)),
      result,
    );
    const card = h("article", { class: "card call", dataset: { callId: call.id || "", tool: call.name, status: "running" } }, details, answer);
    if (!call.id) return card;
    const entry = { card, details, ts: event.ts, status, took, result, answer, name: call.name, args: call.args || {}, author: event.author, runId: this.currentRun };
    this.calls.set(call.id, entry);
    // A workflow node asking a person (ADK 2.x's request for input, a tool node's
    // approval among them) waits with no interim result: its request goes below it.
    if (long && call.name === REQUEST_INPUT && this.hooks.onPending) this.hooks.onPending(call.id, entry);
    return card;
  }

  /**
   * Complete the cards of the calls this event answers; unknown ones become blocks.
   * Returns the seq tag of the first completed card, or null.
   */
  mergeResponses(seq, event, blocks) {
    let first = null;
    const confirming = (event.actions && event.actions.requested_tool_confirmations) || {};
    for (const response of event.function_responses || []) {
      const request = this.requests.get(response.id);
      if (request) {
        // A request's box holds only what a person may do: its events' buttons go below.
        const tag = seqTag(seq, false, false);
        this.answerRequest(request, response, tag);
        inspectInCard(request.card, seq);
        first = first || tag;
        continue;
      }
      const entry = this.calls.get(response.id);
      if (!entry) {
        const card = orphanResult(response);
        // Its call may be on a page further back: prepend() joins them then.
        if (response.id && !this.orphans.has(response.id)) this.orphans.set(response.id, { card, response, event, seq });
        blocks.push(card);
        continue;
      }
      const tag = seqTag(seq, false);
      if (Object.hasOwn(confirming, response.id)) {
        awaitApproval(entry, tag);
        first = first || tag;
        continue;
      }
      this.finishCall(entry, response, event, tag);
      first = first || tag;
    }
    return first;
  }

  /** Put a call's result (or a long-running call's interim one) in its card. */
  finishCall(entry, response, event, tag) {
    if (entry.card.dataset.status === "pending") keepInterim(entry, gettext("Interim result"));
    if (entry.card.dataset.status === "awaiting") keepInterim(entry, gettext("Waited for approval"));
    entry.card.dataset.status = response.status;
    entry.status.replaceChildren(statusBadge(shownStatus(response)));
    entry.took.textContent = duration((event.ts - entry.ts) * 1000);
    entry.result.replaceChildren(h("div", { class: "label" }, gettext("Result "), tag), resultTree(response.response));
    if (response.status === "pending") {
      // A long-running call waits for its result from a person: show it.
      entry.details.open = true;
      if (this.hooks.onPending) this.hooks.onPending(response.id, entry);
    } else {
      entry.answer.replaceChildren();
    }
  }

  /**
   * Results drawn before their calls (a page ended between them, further back than
   * a page reaches): once an older page shows the call, the result joins its card,
   * and where the result stood a note points up to it, keeping its seq.
   */
  joinOrphans() {
    for (const [id, orphan] of this.orphans) {
      const entry = this.calls.get(id);
      if (!entry) continue;
      this.orphans.delete(id);
      this.finishCall(entry, orphan.response, orphan.event, seqTag(orphan.seq, false));
      orphan.card.replaceWith(h("p", { class: "note joined" }, interpolate(gettext("The result of %(name)s: in its call above."), { name: orphan.response.name }, true)));
    }
  }

  /**
   * ADK's requests for a person (a confirmation, a credential): each is drawn in the
   * card of the call it pauses, so one request is one card; a card of its own only
   * when that call is not shown. Returns the seq tag of the first one merged, or null.
   */
  mergeRequests(seq, event, blocks) {
    let first = null;
    for (const call of event.function_calls || []) {
      if (!REQUEST_CALLS.has(call.name)) continue;
      const host = this.calls.get(pausedCallId(call));
      if (!host) {
        blocks.push(this.requestBox(event, call, null));
        continue;
      }
      const tag = seqTag(seq, false, false);
      this.requestBox(event, call, host, tag);
      inspectInCard(host.card, seq);
      first = first || tag;
    }
    return first;
  }

  /**
   * The request's part of a card: what it waits for, and a slot (`outcome`) the page
   * fills from the request JSON (requests.js); in `host`'s card, or a card of its own.
   */
  requestBox(event, call, host, tag = null) {
    const credential = call.name === "adk_request_credential";
    const kind = credential ? "credential" : "approval";
    const hint = credential ? credentialWanted(call) : humanHint(confirmationOf(call).hint);
    const tagSlot = h("span", { class: "request-seq" }, tag ? [gettext("asked "), tag] : null);
    const outcome = h(
      "div",
      { class: "request-outcome" },
      h("p", { class: "waits" }, credential ? gettext("Waits for a credential from the session's owner.") : gettext("Waits for a decision on this call.")),
    );
    const box = h(
      "section",
      { class: "request-box", dataset: { callId: call.id || "", kind, status: "pending" }, "aria-label": credential ? gettext("Credential requested") : gettext("Approval requested") },
      h("header", {}, badge(credential ? gettext("credential requested") : gettext("approval requested"), "wait"), tagSlot),
      hint ? h("p", { class: "hint" }, hint) : null,
      outcome,
    );
    let card = host ? host.card : null;
    if (host) {
      card.dataset.request = kind;
      host.answer.before(box);
      host.details.open = true; // a call that waits for a person stays open
      if (credential && card.dataset.status === "running") host.status.replaceChildren(badge(gettext("waiting for a credential"), "wait"));
    } else {
      // The paused call is not shown (it never is, for a request made without one).
      const original = credential ? {} : confirmationOf(call).call;
      card = h(
        "article",
        { class: "card call", dataset: { callId: call.id || "", tool: original.name || call.name, request: kind, status: "awaiting" } },
        h(
          "details",
          { class: "call-details", open: true },
          callLine(original.name || call.name, original.args, badge(gettext("waiting"), "wait")),
          original.args ? h("div", { class: "call-args" }, h("div", { class: "label" }, gettext("Arguments")), argsTree(original.args)) : null,
        ),
        box,
      );
    }
    if (!call.id) return card;
    const paused = host || (credential ? {} : confirmationOf(call).call);
    const entry = { callId: call.id, toolCallId: pausedCallId(call), kind, card, box, outcome, tagSlot, answered: null, toolName: paused.name || "", args: paused.args || {}, runId: this.currentRun };
    this.requests.set(call.id, entry);
    if (this.hooks.onRequest) this.hooks.onRequest(entry);
    return card;
  }

  /** The answer to a request (a decision, a credential): never its content. */
  answerRequest(entry, response, tag) {
    const body = response.response || {};
    let answered = "answered";
    if (entry.kind === "approval") answered = body.confirmed === true ? "approved" : "rejected";
    entry.answered = answered;
    entry.box.dataset.status = answered;
    entry.tagSlot.append(" · answered ", tag);
    // What the approver decided beyond yes or no (agents.requests.kinds): the
    // arguments she changed the call to, or her text in the tool's place.
    const payload = entry.kind === "approval" && body.payload && typeof body.payload === "object" ? body.payload : {};
    const changed = answered === "approved" && payload.toolcrib_arguments && typeof payload.toolcrib_arguments === "object" ? payload.toolcrib_arguments : null;
    const instead = answered === "rejected" && typeof payload.toolcrib_response === "string" ? payload.toolcrib_response : null;
    const words = {
      approved: changed ? gettext("Approved with changed arguments: the tool runs with them.") : gettext("Approved: the tool runs."),
      rejected: instead === null ? gettext("Rejected: the tool does not run.") : gettext("Answered instead: the agent reads this as the tool's answer; the tool does not run."),
      answered: gettext("Answered: the agent resumes."),
    };
    entry.outcome.replaceChildren(
      ...[
        h("p", { class: "approval-outcome", dataset: { outcome: answered } }, answered === "answered" ? badge(answered, "ok") : statusBadge(answered), " ", words[answered]),
        changed ? h("div", { class: "call-args approved-args" }, h("div", { class: "label" }, gettext("Approved arguments")), argsTree(changed)) : null,
        instead === null ? null : h("figure", { class: "request-response" }, h("blockquote", {}, instead)),
      ].filter(Boolean),
    );
    if (this.hooks.onRequest) this.hooks.onRequest(entry);
  }

  runDivider(event) {
    const run = event.run || {};
    if (event.kind === "run_started") {
      this.runStarts.set(run.id, event.ts);
      this.currentRun = run.id || null;
      return h("div", { class: "divider", id: run.id ? `run-${run.id}` : null }, h("span", {}, interpolate(gettext("Run started · %(ts)s"), { ts: clock(event.ts) }, true), this.resumes(run), run.id ? [" · ", traceButton(run.id)] : null));
    }
    const started = this.runStarts.get(run.id);
    const took = started ? ` · ${duration((event.ts - started) * 1000)}` : "";
    const tone = { failed: "bad", waiting: "wait" }[run.status] || "";
    const line = h(
      "div",
      { class: `divider ${tone}`.trim(), dataset: { status: run.status || "", run: run.id || "" } },
      h("span", {}, `${runWords(run)}${took}`, this.resumes(run), run.id ? [" · ", traceButton(run.id)] : null),
    );
    // Model, tokens, duration, model and tool calls (trace.js), under the line.
    return run.stats ? [line, runStats(run.stats)] : line;
  }

  /** " · resumes the run of 12:03:04", linked to where that run started. */
  resumes(run) {
    if (!run.resumes) return null;
    const started = this.runStarts.get(run.resumes);
    return [" · ", h("a", { href: `#run-${run.resumes}`, class: "resumes", dataset: { resumes: run.resumes } }, started ? interpolate(gettext("resumes the run of %(started)s"), { started: clock(started) }, true) : gettext("resumes an earlier run"))];
  }

  /** Partial model text: append to the bubble of this agent's turn. */
  stream(event) {
    const key = streamKey(event);
    let entry = this.streaming.get(key);
    const stick = this.nearBottom();
    if (!entry) {
      const text = h("div", { class: "bubble-text" });
      const element = h(
        "li",
        { class: "item kind-text agent streaming", "aria-busy": "true" },
        h("div", { class: "message" }, h("div", { class: "author" }, event.author), h("div", { class: "bubble" }, text)),
      );
      entry = { element, text, source: "", view: liveMarkdown(text, MARKDOWN) };
      indent(element, event);
      this.streaming.set(key, entry);
      this.list.append(element);
    }
    entry.source += event.text;
    entry.view.update(entry.source);
    if (stick) this.scrollToEnd();
  }

  dropStreams(invocationId) {
    for (const [key, entry] of this.streaming) {
      if (key.startsWith(`${invocationId}|`)) {
        entry.element.remove();
        this.streaming.delete(key);
      }
    }
  }

  insert(item, seq) {
    if (this.older) {
      // prepend(): older than every shown event, after the older ones drawn so far.
      this.list.insertBefore(item, this.older.anchor || this.list.querySelector(":scope > .streaming"));
      return;
    }
    // Usually the newest: append, keeping streaming bubbles last.
    const later = seq > this.lastSeq ? null : [...this.list.children].find((child) => Number(child.dataset.seq) > seq);
    if (later) this.list.insertBefore(item, later);
    else {
      const firstStream = this.list.querySelector(":scope > .streaming");
      this.list.insertBefore(item, firstStream);
    }
  }

  nearBottom() {
    const el = this.scroller;
    return el.scrollHeight - el.scrollTop - el.clientHeight < 120;
  }

  scrollToEnd() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }
}

const WAITING_FOR = { approval: gettext_noop("Waiting for approval"), credential: gettext_noop("Waiting for a credential"), result: gettext_noop("Waiting for a result") };

/** "Run succeeded", "Waiting for approval", "Run failed". */
function runWords(run) {
  if (run.status === "waiting") return (WAITING_FOR[run.waiting_for] ? gettext(WAITING_FOR[run.waiting_for]) : null) || gettext("Waiting for a person");
  return interpolate(gettext("Run %(status)s"), { status: statusWord(run.status || "finished") }, true);
}

/** Who switched which toolset (its `text`), else the generic note. */
function toolsChanged(event) {
  const switched = event.toolsets && typeof event.toolsets === "object" ? Object.entries(event.toolsets) : [];
  return h(
    "div",
    { class: "note tools-changed" },
    event.text || gettext("The tools you may use changed."),
    switched.length
      ? h(
          "span",
          { class: "chips" },
          switched.map(([name, active]) => h("span", { class: `chip toolset ${active ? "on" : "off"}`, dataset: { toolset: name } }, h("span", { class: "chip-key" }, name), active ? gettext(" on") : gettext(" off"))),
        )
      : null,
  );
}

/** A long-running call's interim result (and its seq tag) stays, folded away. */
function keepInterim(entry, title) {
  const interim = h("details", { class: "interim" }, h("summary", {}, title), ...entry.result.childNodes);
  entry.result.before(interim);
}

/** ADK answered the call "needs confirmation": it has not run, and waits. */
function awaitApproval(entry, tag) {
  entry.card.dataset.status = "awaiting";
  entry.status.replaceChildren(badge(gettext("awaiting approval"), "wait"));
  entry.result.replaceChildren(
    h("div", { class: "label" }, gettext("Result "), tag),
    h("span", { class: "muted" }, gettext("Not run yet: it waits for approval.")),
  );
}

/** A confirmation request's call and hint (ADK writes both spellings). */
function confirmationOf(call) {
  const args = call.args || {};
  const confirmation = args.toolConfirmation || args.tool_confirmation || {};
  return { call: args.originalFunctionCall || args.original_function_call || {}, hint: confirmation.hint || "" };
}

/** What a credential request asks for, in words: "an apiKey credential (demo_key)". */
function credentialWanted(call) {
  const args = call.args || {};
  const config = args.authConfig || args.auth_config || {};
  const scheme = config.authScheme || config.auth_scheme || {};
  const type = scheme.type || scheme.type_ || "";
  const key = config.credentialKey || config.credential_key || "";
  if (!type && !key) return "";
  return interpolate(gettext("Asks for %(type)s%(key)s."), { type: type ? interpolate(gettext("an %(type)s credential"), { type }, true) : gettext("a credential"), key: key ? ` (${key})` : "" }, true);
}

/** The id of the call a request pauses: the confirmed call, or the one asking for a credential. */
function pausedCallId(call) {
  const args = call.args || {};
  if (call.name === "adk_request_credential") return args.functionCallId || args.function_call_id || "";
  return confirmationOf(call).call.id || "";
}

/** Indent an item by how deep its agent was called; returns the branch's calls. */
function indent(item, event) {
  const segments = (event.branch || "").split(".").filter((part) => part.includes("@"));
  if (!segments.length) return segments;
  item.classList.add("nested");
  item.dataset.depth = String(segments.length);
  item.dataset.agent = splitSegment(segments[segments.length - 1])[0];
  item.style.setProperty("--depth", String(segments.length));
  return segments;
}

/** "summarizer@adk-1" → ["summarizer", "adk-1"]. */
function splitSegment(segment) {
  const at = segment.lastIndexOf("@");
  return [segment.slice(0, at), segment.slice(at + 1)];
}

function streamKey(event) {
  return `${event.invocation_id}|${event.author}`;
}

function sideOf(event) {
  if (event.kind === "user_message") return "user";
  if (event.author === "system") return "system";
  return "agent";
}

function seqTag(seq, anchor, inspect = true) {
  const attrs = { class: "seq", title: inspect ? null : interpolate(gettext("Event #%(seq)s"), { seq }, true), dataset: { eventSeq: String(seq) } };
  if (anchor) attrs.dataset.seq = String(seq);
  // No "#12" chip: the button that opens the event in the inspector (inspector.js)
  // names it; a tag without one keeps it in its title and data-event-seq.
  return h("span", attrs, inspect ? inspectButton(seq) : null);
}

/** A line at the foot of a call's card with the inspect buttons of its request's events. */
function inspectInCard(card, seq) {
  let line = card.querySelector(":scope > .card-events");
  if (!line) {
    line = h("p", { class: "card-events muted" }, gettext("Events "));
    card.append(line);
  }
  line.append(inspectButton(seq), " ");
}

// Model text is Markdown (markdown.js), its headings under the page's; a person's
// message stays plain text, as typed.
const MARKDOWN = { headingShift: 2 };

/** A message; a user message names its sender when not `owner` (the session's). */
function message(event, owner = "") {
  const user = event.kind === "user_message";
  return h(
    "div",
    { class: "message" },
    user ? null : h("div", { class: "author" }, event.author),
    h("div", { class: "bubble" }, h("div", { class: "bubble-text" }, user ? event.text : renderMarkdown(event.text, MARKDOWN))),
    h("div", { class: "meta" }, senderNote(event, owner), clock(event.ts), user ? null : copyButton(() => event.text, { label: gettext("Copy answer"), className: "copy-answer" })),
  );
}

function orphanResult(response) {
  return h(
    "article",
    { class: "card call", dataset: { callId: response.id || "", tool: response.name, status: response.status } },
    h(
      "details",
      { class: "call-details" },
      callLine(response.name, null, h("span", { class: "call-status" }, statusBadge(shownStatus(response)))),
      h("div", { class: "call-result" }, h("div", { class: "label" }, gettext("Result")), resultTree(response.response)),
    ),
  );
}

// Arguments that say the most about a call, in order of preference; else the first
// text argument, else the first.
const TELLING_ARGS = ["query", "q", "request", "city", "location", "url", "path", "file", "filename", "command", "sql", "expression", "text", "name", "recipient", "symbol", "topic", "key"];

/** A call's one line: the <summary> of its card. */
function callLine(name, args, ...rest) {
  return h(
    "summary",
    { class: "call-line" },
    h("span", { class: "call-icon", "aria-hidden": "true" }, "ƒ"),
    h("code", { class: "call-name" }, name),
    keyArgument(args),
    ...rest,
  );
}

/** The key argument, shortened: `city: london`. */
function keyArgument(args) {
  const entries = Object.entries(args || {});
  if (!entries.length) return null;
  const telling = (wanted) => entries.find(([key]) => key.toLowerCase() === wanted);
  const [key, value] = TELLING_ARGS.map(telling).find(Boolean) || entries.find(([, v]) => typeof v === "string") || entries[0];
  return h("span", { class: "call-key", title: `${key}: ${inline(value, 300)}` }, h("span", { class: "call-key-name" }, `${key}:`), " ", inline(value, 48));
}

function argsTree(args) {
  if (!Object.keys(args || {}).length) return h("span", { class: "muted" }, gettext("none"));
  return jsonView(args, { label: gettext("Arguments"), className: "args" });
}

function resultTree(response) {
  return jsonView(response, { label: gettext("Result"), className: "result" });
}

/** What a call's line says: governance's outcome for a refused call (denied,
 * rate_limited, ...); "waiting" for a long-running call's interim answer. */
function shownStatus(response) {
  if (response.status === "pending") return "waiting";
  const outcome = response.response && response.response.outcome;
  if (response.status === "error" && typeof outcome === "string" && outcome) return outcome;
  return response.status;
}

function handoff(kind, { from, to, reason }) {
  const label = kind === "transfer" ? gettext("Transferred") : gettext("Escalated");
  return h(
    "div",
    { class: `handoff ${kind}` },
    h("span", { class: "handoff-label" }, label),
    h("span", { class: "agent-chip" }, from),
    h("span", { class: "arrow", "aria-label": gettext("to") }, "→"),
    h("span", { class: "agent-chip" }, to || (kind === "escalation" ? gettext("parent agent") : "?")),
    reason ? h("span", { class: "handoff-reason" }, reason) : null,
  );
}

function errorBox(event) {
  const error = event.error || {};
  return h(
    "div",
    { class: "error-box", role: "alert" },
    h("strong", {}, turnErrorTitle(error.code)),
    // A workflow node's failed attempt: ADK may run it again (its retry config),
    // and the turn goes on; the run's end says whether it failed.
    event.node ? h("span", { class: "node-path", title: event.node.path }, interpolate(gettext(" in %(path)s"), { path: nodeNames(event.node.path) }, true)) : null,
    h("p", {}, error.message || gettext("The turn failed.")),
  );
}

/** `wf@1/report@1/summarize@1` -> `wf › report › summarize`: a node path as read. */
function nodeNames(path) {
  return String(path || "")
    .split("/")
    .map((part) => part.split("@")[0])
    .join(" › ");
}

/** A workflow node's result (ADK 2.x): where in the graph, and what it gave. */
function nodeOutput(node) {
  const output = node ? node.output : null;
  const shown =
    output !== null && typeof output === "object"
      ? jsonView(output, { label: gettext("Output"), className: "result" })
      : h("span", { class: "node-value" }, output === null || output === undefined ? gettext("(no output)") : String(output));
  return h(
    "div",
    { class: "node-output" },
    h("span", { class: "chip-key" }, gettext("node")),
    h("span", { class: "node-path", title: node ? node.path : "" }, nodeNames(node ? node.path : "")),
    shown,
  );
}

function artifactChips(delta) {
  return h(
    "div",
    { class: "chips" },
    Object.entries(delta).map(([name, version]) =>
      // A button: the page opens its preview (preview.js's bindArtifactChips).
      h(
        "button",
        { type: "button", class: "chip artifact", dataset: { artifactChip: name, version: String(version) }, title: interpolate(gettext("Preview %(name)s v%(version)s"), { name, version }, true) },
        h("span", { class: "chip-key" }, gettext("artifact")),
        ` ${name} `,
        h("span", { class: "muted" }, `v${version}`),
      ),
    ),
  );
}

function stateChips(delta) {
  const chips = [];
  for (const scope of ["session", "user", "app"]) {
    for (const [key, value] of Object.entries(delta[scope] || {})) {
      chips.push(
        h(
          "span",
          { class: "chip state", title: json(value, 1000) },
          h("span", { class: "chip-key" }, `${scope}.${key}`),
          ` = ${inline(value, 60)}`,
        ),
      );
    }
  }
  return chips.length ? h("div", { class: "chips" }, chips) : null;
}
