// One card per request (a pause for a person: an approval, a credential, a call's
// result), drawn from the request JSON of /api/requests/ for the inbox and the session
// timeline alike: what will run with which arguments, why it waits, who may answer,
// when it expires; the answer (POST /api/requests/{id}/answer/) and, once answered,
// the outcome with who, when and the comment. A credential goes from its input to the
// request body and nowhere else: the inputs are emptied as it is sent, and nothing
// here writes it into the page or logs it. A call an MCP client made through the
// gateway has no session and no agent to resume: its card names the client and the
// user who asked, and its answer lets the client's call run, or tells it no.
// An approver may change the arguments before approving (the card then shows the
// asked and the approved ones, and who changed them), or answer in the tool's place
// (the caller reads her text as the tool's answer); a tool that needs several
// people's approvals (the two-person rule) shows who approved so far.

import { api, ApiError } from "./api.js";
import { argsView, badge, dateTime, h, statusBadge, timeAgo, toast } from "./dom.js";
import { gettext, gettext_noop, interpolate } from "./i18n.js";
import { renderInlineMarkdown } from "./markdown.js";

const KIND_LABELS = { approval: "approval", credential: "credential", call: "result" };
const COMMENT_LIMIT = 2000;
let ids = 0;

/** A list of requests: `query` as GET /api/requests/ takes it (a page or a plain list). */
export async function listRequests(query = {}) {
  const data = await api("/api/requests/", { query });
  if (Array.isArray(data)) return data;
  return (data && data.results) || [];
}

/**
 * Approve or reject many approvals at once, with one comment: each is decided on its
 * own; the answer says per id what happened (decided, counted, or refused and why).
 */
export async function decideMany(ids, { approved, comment = "" }) {
  return api("/api/requests/decide/", { method: "POST", body: { ids, approved, comment } });
}

/** The MCP client whose gateway call waits (a request with no session), or "". */
export function gatewayClient(request) {
  if (request.session) return "";
  return request.agent || gettext("the MCP client");
}

/** What follows an answer `body` to `request`: the agent resumes, or the client hears. */
export function afterAnswer(request, body) {
  const client = gatewayClient(request);
  if (request.kind === "approval" && body.approved && stillShort(request)) return gettext("it waits for another person's approval");
  if (request.kind === "approval" && body.response) return interpolate(gettext("%(client)s reads your answer in the tool's place"), { client: client || gettext("the agent") }, true);
  if (!client || request.kind !== "approval") return gettext("the agent resumes");
  return body.approved ? interpolate(gettext("the call runs for %(client)s"), { client }, true) : interpolate(gettext("%(client)s is told it was rejected"), { client }, true);
}

/** Whether one more approval leaves `request` still short of the approvals it needs. */
function stillShort(request) {
  return (request.approvals || []).length + 1 < (request.approvals_required || 1);
}

/** A request's place in the DOM, so a refetch can keep a card someone is typing in. */
export function requestKey(request) {
  const approvals = (request.approvals || []).length;
  return `${request.id}:${request.status}:${request.may_answer ? 1 : 0}:${approvals}`;
}

/**
 * The card of a request, standalone (the inbox): its heading, what runs, and the
 * part that answers or tells the outcome.
 * @param {object} request the request JSON
 * @param {object} hooks onAnswered(run, request), onRefused(error, request)
 */
export function requestCard(request, hooks = {}) {
  const client = gatewayClient(request);
  return h(
    "article",
    {
      class: "card request",
      dataset: { requestId: String(request.id), kind: request.kind, status: request.status, session: request.session || "", callId: request.call_id || "" },
      "aria-label": title(request),
    },
    h(
      "header",
      {},
      badge(KIND_LABELS[request.kind] || request.kind, "wait"),
      request.tool_name ? h("code", { class: "call-name" }, request.tool_name) : null,
      request.status === "pending" ? null : statusBadge(request.status),
      h("span", { class: "muted small request-when" }, gettext("asked "), timeAgo(request.created_at)),
    ),
    h("h3", { class: "request-title" }, title(request)),
    request.description ? h("p", { class: "request-description" }, renderInlineMarkdown(request.description)) : null,
    h(
      "div",
      { class: "inbox-meta" },
      request.requester ? h("span", {}, interpolate(gettext("asked by %(requester)s"), { requester: request.requester }, true)) : null,
      client ? h("span", { class: "request-client" }, interpolate(gettext("through the MCP client %(client)s"), { client }, true)) : null,
      !client && request.agent ? h("span", {}, interpolate(gettext("agent %(agent)s"), { agent: request.agent }, true)) : null,
      request.session
        ? h("a", { href: `/sessions/${request.session}/` }, request.session_title ? interpolate(gettext("open “%(session_title)s”"), { session_title: request.session_title }, true) : gettext("open the session"))
        : null,
    ),
    request.kind === "credential" ? null : h("div", { class: "call-args asked-args" }, h("div", { class: "label" }, argsLabel(request, client)), argsView(request.args)),
    requestPart(request, hooks),
  );
}

function argsLabel(request, client) {
  const label = request.approved_args ? gettext("Arguments asked") : gettext("Arguments");
  return client ? interpolate(gettext("%(label)s (secrets redacted)"), { label }, true) : label;
}

/**
 * Why it waits, who may answer, until when; then the answer form (pending, mine to
 * give) or the outcome. The timeline puts this in the card of the call it pauses.
 */
export function requestPart(request, hooks = {}) {
  const part = h("div", { class: "request-part", dataset: { requestId: String(request.id), kind: request.kind, status: request.status } });
  const hint = humanHint(request.hint);
  part.append(
    ...[
      request.reason ? h("p", { class: "request-reason" }, request.reason) : null,
      hint && hint !== request.reason ? h("p", { class: "hint" }, hint) : null,
      approvedArgs(request),
      approvalsSoFar(request),
    ].filter(Boolean),
  );
  if (request.status !== "pending") {
    part.append(outcome(request));
    return part;
  }
  part.append(h("p", { class: "waits" }, waitsFor(request), request.expires_at ? [" · ", expiry(request)] : null));
  if (approvedByMe(request)) part.append(h("p", { class: "muted small approved-by-me" }, gettext("You approved it; it waits for another person's approval.")));
  if (!request.may_answer) return part;
  const form = { approval: decisionForm, credential: credentialForm, call: resultForm }[request.kind];
  if (form) part.append(form(request, hooks));
  return part;
}

/** The arguments an approver changed the call to, and who: beside the asked ones. */
export function approvedArgs(request) {
  if (!request.approved_args) return null;
  const who = request.args_edited_by ? interpolate(gettext(", changed by %(args_edited_by)s"), { args_edited_by: request.args_edited_by }, true) : "";
  return h(
    "div",
    { class: "call-args approved-args" },
    h("div", { class: "label" }, `${request.status === "approved" ? gettext("Approved arguments") : gettext("Arguments to approve")}${who}`),
    argsView(request.approved_args),
  );
}

/** Who approved so far, of how many people it needs (the two-person rule). */
export function approvalsSoFar(request) {
  const needed = request.approvals_required || 1;
  if (needed <= 1) return null;
  const approvals = request.approvals || [];
  const names = approvals.map((approval) => approval.by);
  return h(
    "p",
    { class: "request-approvals", dataset: { approvals: String(approvals.length), required: String(needed) } },
    badge(interpolate(gettext("%(approvals)s of %(needed)s approvals"), { approvals: approvals.length, needed }, true), approvals.length >= needed ? "ok" : "wait"),
    " ",
    names.length ? interpolate(gettext("Approved by %(names)s."), { names: names.join(", ") }, true) : interpolate(gettext("Needs %(needed)s approvals from different people, never the requester's."), { needed }, true),
  );
}

function approvedByMe(request) {
  const me = document.body.dataset.user || "";
  return Boolean(me) && (request.approvals || []).some((approval) => approval.by === me);
}

/** ADK's own hint speaks to developers ("…responding with a FunctionResponse…"): not shown. */
export function humanHint(hint) {
  if (!hint || /FunctionResponse|ToolConfirmation/.test(hint)) return "";
  return hint;
}

function title(request) {
  if (request.title) return request.title;
  const tool = request.tool_name || gettext("a tool");
  if (request.kind === "credential") return interpolate(gettext("Give %(tool)s a credential"), { tool }, true);
  if (request.kind === "call") return interpolate(gettext("Post the result of %(tool)s"), { tool }, true);
  return interpolate(gettext("Approve a call of %(tool)s"), { tool }, true);
}

function waitsFor(request) {
  if (request.who_may_answer) return interpolate(gettext("Waits for %(who_may_answer)s."), { who_may_answer: lowerFirst(request.who_may_answer) }, true);
  if (request.answer_group) return interpolate(gettext("Waits for a member of %(answer_group)s (not %(requester)s)."), { answer_group: request.answer_group, requester: request.requester || gettext("the requester") }, true);
  return gettext("Waits for the session's owner.");
}

/** "A member of x" reads on after "Waits for"; a name ("Alice, or staff") stays as it is. */
function lowerFirst(text) {
  return /^(A|An|The) /.test(text) ? text[0].toLowerCase() + text.slice(1) : text;
}

/** "expires in 4 min", from the request's time. */
export function expiry(request) {
  if (!request.expires_at) return null;
  return h("span", { class: "expiry" }, gettext("expires "), timeAgo(request.expires_at));
}

const OUTCOMES = {
  approved: gettext_noop("the tool ran."),
  rejected: gettext_noop("the tool never ran."),
  expired: gettext_noop("nobody answered in time; the agent was told."),
};

/** What became of a gateway call's approval, for its client. */
function gatewayOutcomes(client) {
  return {
    approved: interpolate(gettext("the call runs for %(client)s."), { client }, true),
    rejected: interpolate(gettext("%(client)s is told it was rejected."), { client }, true),
    expired: interpolate(gettext("nobody answered in time; %(client)s is told."), { client }, true),
  };
}

/** An answered request: its status, who answered, when, and the comment. */
export function outcome(request) {
  const who = request.answered_by ? interpolate(gettext(" by %(answered_by)s"), { answered_by: request.answered_by }, true) : "";
  const when = request.answered_at ? ` · ${dateTime(request.answered_at)}` : "";
  const client = gatewayClient(request);
  const outcomes = client ? gatewayOutcomes(client) : Object.fromEntries(Object.entries(OUTCOMES).map(([key, text]) => [key, gettext(text)]));
  let words;
  if (request.status === "approved") words = interpolate(gettext("Approved%(who)s%(when)s: %(approved)s"), { who, when, approved: outcomes.approved }, true);
  else if (request.status === "rejected" && typeof request.response === "string") words = interpolate(gettext("Answered instead%(who)s%(when)s: %(client)s read this as the tool's answer; the tool never ran."), { who, when, client: client || gettext("the agent") }, true);
  else if (request.status === "rejected") words = interpolate(gettext("Rejected%(who)s%(when)s: %(rejected)s"), { who, when, rejected: outcomes.rejected }, true);
  else if (request.status === "expired") words = interpolate(gettext("Expired%(when)s: %(expired)s"), { when, expired: outcomes.expired }, true);
  else if (request.kind === "credential") words = interpolate(gettext("Credential given%(who)s%(when)s: the tool ran again with it."), { who, when }, true);
  else words = interpolate(gettext("Answered%(who)s%(when)s: the agent resumed."), { who, when }, true);
  return h(
    "div",
    { class: "request-outcome" },
    h(
      "p",
      { class: "approval-outcome", dataset: { outcome: request.status } },
      request.status === "answered" ? badge(gettext("answered"), "ok") : statusBadge(request.status),
      " ",
      words,
    ),
    typeof request.response === "string"
      ? h(
          "figure",
          { class: "request-response" },
          h("blockquote", {}, request.response),
          h("figcaption", { class: "muted small" }, interpolate(gettext("the tool's answer%(who)s"), { who }, true)),
        )
      : null,
    request.comment
      ? h(
          "figure",
          { class: "request-comment" },
          h("blockquote", {}, request.comment),
          h("figcaption", { class: "muted small" }, interpolate(gettext("comment%(who)s"), { who }, true)),
        )
      : null,
  );
}

/** Send an answer; the hooks hear the run, or a refusal that is final. */
async function send(request, body, hooks, { status, enable }) {
  status.textContent = gettext("Sending…");
  try {
    const answer = await api(`/api/requests/${encodeURIComponent(request.id)}/answer/`, { method: "POST", body });
    status.textContent = interpolate(gettext("Sent: %(body)s."), { body: afterAnswer(request, body) }, true);
    followAnswer(request, status);
    // {run, request}: `run` is null for a gateway call's approval (no agent resumes).
    const run = answer && typeof answer === "object" && "run" in answer ? answer.run : answer;
    if (hooks.onAnswered) hooks.onAnswered(run, request, body);
    return true;
  } catch (error) {
    status.textContent = "";
    enable();
    toast(interpolate(gettext("Not sent: %(error)s"), { error: error.message }, true), "bad");
    // Answered or expired meanwhile (409), not mine (403), gone (404): show what is.
    if (error instanceof ApiError && [403, 404, 409].includes(error.status) && hooks.onRefused) hooks.onRefused(error, request);
    return false;
  }
}

const FOLLOW_MS = 15000;

/**
 * Keep the keyboard's place once an answer is sent. The button pressed is disabled,
 * then replaced when the answer is drawn, and focus would fall to the page: it goes
 * to the status line at once, then to the request's outcome (the session), or, when
 * the card leaves the inbox's list, to the next request's card or the empty list,
 * until the person moves focus herself (or FOLLOW_MS pass).
 */
function followAnswer(request, status) {
  const item = status.closest(".inbox-list > li");
  const list = item ? item.parentElement : null;
  // The list may be out of its box already: a live refetch that emptied the inbox
  // can land before the answer's own reply does.
  const box = list ? list.parentElement || document.getElementById(list.dataset.box) : null;
  const index = list ? [...list.children].indexOf(item) : -1;
  status.tabIndex = -1;
  status.focus();
  let placed = status;
  const outcomes = `.request-part[data-request-id="${CSS.escape(String(request.id))}"] .approval-outcome`;
  const target = () => {
    if (!list) return [...document.querySelectorAll(outcomes)].find((el) => el.getClientRects().length) || null;
    if (list.isConnected && list.children.length) return list.children[Math.min(index, list.children.length - 1)].querySelector(".card");
    return box && box.isConnected ? box.querySelector(".state.empty") : null;
  };
  // Redrawn more than once (the answer, then the refetch): follow until the person moves.
  const place = () => {
    const active = document.activeElement;
    if (active === placed) return false;
    if (active && active !== document.body) return true; // the person moved on
    // Focus fell (its element removed, or moved within a list): put it back.
    const found = placed.isConnected && placed.getClientRects().length ? placed : target();
    if (!found) return false;
    found.tabIndex = -1;
    placed = found; // before focus(): its focusin is not the person moving on
    found.focus();
    return false;
  };
  const observer = new MutationObserver(() => {
    if (place()) stop();
  });
  const moved = (event) => {
    if (event.target !== placed) stop();
  };
  const timer = setTimeout(() => stop(), FOLLOW_MS);
  function stop() {
    observer.disconnect();
    document.removeEventListener("focusin", moved);
    clearTimeout(timer);
  }
  observer.observe(document.body, { childList: true, subtree: true });
  document.addEventListener("focusin", moved);
}

/**
 * Approve / Reject, with an optional comment and, where allowed, "always allow for
 * me"; "Change the arguments" (before anyone approved: every approver approves the
 * same call) and "Answer instead" (the caller reads the text as the tool's answer).
 */
function decisionForm(request, hooks) {
  const label = request.tool_name || gettext("this call");
  const n = (ids += 1);
  const commentId = `request-${request.id}-comment-${n}`;
  const comment = h("textarea", { id: commentId, class: "request-comment-input", rows: "2", maxlength: String(COMMENT_LIMIT), placeholder: gettext("Why, for the requester and the audit") });
  const remember = request.may_remember ? h("input", { type: "checkbox", name: "remember" }) : null;
  const approve = h("button", { type: "button", class: "button small approve", dataset: { decide: "approve" }, "aria-label": interpolate(gettext("Approve %(label)s"), { label }, true) }, stillShort(request) ? gettext("Approve (one of several)") : gettext("Approve"));
  const reject = h("button", { type: "button", class: "button small reject", dataset: { decide: "reject" }, "aria-label": interpolate(gettext("Reject %(label)s"), { label }, true) }, gettext("Reject"));
  const status = h("span", { class: "muted small", role: "status" });
  const edit = editArguments(request, n);
  const instead = answerInstead(request, n);
  const controls = [comment, remember, approve, reject, ...(edit ? edit.controls : []), ...instead.controls].filter(Boolean);
  const enable = (on) => {
    for (const control of controls) control.disabled = !on;
  };
  const decide = (approved, extra = {}) => {
    const body = { approved, comment: comment.value.trim(), ...extra };
    if (approved && remember && remember.checked) body.remember = true;
    if (approved && edit) {
      const changed = edit.changed();
      if (changed === undefined) return; // not a JSON object: said so, nothing sent
      if (changed) body.arguments = changed;
    }
    enable(false);
    send(request, body, hooks, { status, enable: () => enable(true) });
  };
  approve.addEventListener("click", () => decide(true));
  reject.addEventListener("click", () => decide(false));
  instead.button.addEventListener("click", () => {
    const text = instead.text.value.trim();
    if (!text) {
      toast(gettext("Write the answer the caller should read."), "bad");
      instead.text.focus();
      return;
    }
    decide(false, { response: text });
  });
  return h(
    "div",
    { class: "answer decide", dataset: { requestId: String(request.id) } },
    h("label", { for: commentId, class: "small strong" }, gettext("Comment (optional)")),
    comment,
    remember ? h("label", { class: "remember small" }, remember, interpolate(gettext(" Always allow %(label)s for %(requester)s in this session"), { label, requester: request.requester || "me" }, true)) : null,
    edit ? edit.box : null,
    instead.box,
    h("div", { class: "answer-buttons" }, approve, reject, status),
  );
}

/** "Change the arguments": a JSON editor of the asked ones, sent with Approve when changed. */
function editArguments(request, n) {
  if ((request.approvals || []).length) return null; // approved as they are by someone
  const id = `request-${request.id}-arguments-${n}`;
  const asked = JSON.stringify(request.args || {}, null, 2);
  const editor = h("textarea", { id, class: "json-input edit-arguments", rows: "4", spellcheck: "false" }, asked);
  const box = h(
    "details",
    { class: "answer-edit" },
    h("summary", {}, gettext("Change the arguments, then approve")),
    h("label", { for: id, class: "small" }, gettext("The arguments the call runs with, as a JSON object (within the tool's schema and its grant's condition)")),
    editor,
  );
  const changed = () => {
    if (!box.open || editor.value.trim() === asked.trim()) return null;
    let value;
    try {
      value = JSON.parse(editor.value);
    } catch (error) {
      toast(interpolate(gettext("The arguments are not JSON: %(error)s"), { error: error.message }, true), "bad");
      editor.focus();
      return undefined;
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      toast(gettext('The arguments must be a JSON object, e.g. {"target": "mars"}.'), "bad");
      editor.focus();
      return undefined;
    }
    return value;
  };
  return { box, changed, controls: [editor] };
}

/** "Answer instead": a text the caller reads as the tool's answer; the tool never runs. */
function answerInstead(request, n) {
  const id = `request-${request.id}-response-${n}`;
  const client = gatewayClient(request);
  const text = h("textarea", { id, class: "answer-instead-input", rows: "2", maxlength: "20000" });
  const button = h("button", { type: "button", class: "button small", dataset: { decide: "respond" } }, gettext("Send instead of running"));
  const box = h(
    "details",
    { class: "answer-instead" },
    h("summary", {}, gettext("Answer instead of running the tool")),
    h("label", { for: id, class: "small" }, interpolate(gettext("%(client)s reads this as the tool's answer"), { client: client || gettext("The agent") }, true)),
    text,
    button,
  );
  return { box, text, button, controls: [text, button] };
}

const FIELD_LABELS = {
  api_key: gettext_noop("API key"),
  token: gettext_noop("Bearer token"),
  username: gettext_noop("Username"),
  password: gettext_noop("Password"),
  access_token: gettext_noop("Access token"),
  refresh_token: gettext_noop("Refresh token (optional)"),
};

/** The fields a credential request needs: [name, label, type, required]. */
export function credentialFields(request) {
  const names = Array.isArray(request.fields) && request.fields.length ? request.fields : defaultFields(request.scheme);
  return names.map((name) => [name, FIELD_LABELS[name] ? gettext(FIELD_LABELS[name]) : name, name === "username" ? "text" : "password", name !== "refresh_token"]);
}

function defaultFields(scheme) {
  if (scheme === "apiKey") return ["api_key"];
  if (scheme === "http") return ["token"];
  if (scheme === "oauth2" || scheme === "openIdConnect") return ["access_token", "refresh_token"];
  return [];
}

/** An OAuth2 sign-in: a link to the provider, which sends the browser back to
 * this session once the user has signed in (only an http(s) address is linked). */
function signInLink(request) {
  let url;
  try {
    url = new URL(request.authorization_url);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  return h(
    "p",
    { class: "credential-sign-in" },
    h("a", { class: "button small primary", href: url.href, rel: "noopener noreferrer" }, interpolate(gettext("Sign in to give %(tool_name)s access"), { tool_name: request.tool_name || gettext("the tool") }, true)),
    h("span", { class: "muted small" }, gettext(" You come back here once you have signed in; the tool then runs again.")),
  );
}

function credentialForm(request, hooks) {
  if (request.authorization_url) {
    const link = signInLink(request);
    if (link) return link;
  }
  const fields = credentialFields(request);
  if (!fields.length) {
    return h("p", { class: "muted small" }, interpolate(gettext("A “%(scheme)s” credential cannot be given from the browser."), { scheme: request.scheme }, true));
  }
  const status = h("span", { class: "muted small", role: "status" });
  const inputs = fields.map(([name, label, type, required]) => {
    const id = `credential-${request.id}-${name}-${(ids += 1)}`;
    const input = h("input", { id, name, type, required, autocomplete: "off", spellcheck: "false" });
    return { name, input, row: h("div", { class: "credential-field" }, h("label", { for: id }, label), input) };
  });
  const button = h("button", { type: "submit", class: "button small primary" }, gettext("Send credential"));
  const form = h(
    "form",
    { class: "credential-form answer", dataset: { requestId: String(request.id) }, "aria-label": interpolate(gettext("Credential for %(tool_name)s"), { tool_name: request.tool_name || gettext("the tool") }, true) },
    inputs.map((field) => field.row),
    h("div", { class: "answer-buttons" }, button, status),
    h("p", { class: "muted small" }, gettext("Stored encrypted for you; the tool runs again with it. Revoke it any time on your sessions page.")),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = {};
    for (const { name, input } of inputs) {
      if (input.value) body[name] = input.value;
      input.value = ""; // never kept in the page once sent
    }
    button.disabled = true;
    send(request, body, hooks, { status, enable: () => (button.disabled = false) }).then((sent) => {
      if (sent) for (const { input } of inputs) input.disabled = true;
      else status.textContent = gettext("Type it again to retry.");
    });
  });
  return form;
}

/** A long-running call's result: quick Approve / Reject, or any JSON object. */
function resultForm(request, hooks) {
  const me = document.body.dataset.user || "";
  const label = request.tool_name || gettext("the call");
  const status = h("span", { class: "muted small", role: "status" });
  const approve = h("button", { type: "button", class: "button small approve", dataset: { answer: "approved" }, "aria-label": interpolate(gettext("Approve %(label)s"), { label }, true) }, gettext("Approve"));
  const reject = h("button", { type: "button", class: "button small reject", dataset: { answer: "rejected" }, "aria-label": interpolate(gettext("Reject %(label)s"), { label }, true) }, gettext("Reject"));
  const editor = h("textarea", { class: "json-input", rows: "3", "aria-label": interpolate(gettext("Result of %(label)s as a JSON object"), { label }, true), spellcheck: "false" }, gettext('{"status": "done"}'));
  const custom = h("button", { type: "button", class: "button small" }, gettext("Send result"));
  const buttons = [approve, reject, custom];
  const enable = (on) => {
    for (const button of buttons) button.disabled = !on;
  };
  const post = (response) => {
    enable(false);
    send(request, { response }, hooks, { status, enable: () => enable(true) });
  };
  approve.addEventListener("click", () => post({ status: "approved", approver: me }));
  reject.addEventListener("click", () => post({ status: "rejected", approver: me }));
  custom.addEventListener("click", () => {
    let value;
    try {
      value = JSON.parse(editor.value);
    } catch (error) {
      toast(interpolate(gettext("That is not JSON: %(error)s"), { error: error.message }, true), "bad");
      editor.focus();
      return;
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      toast(gettext('The result must be a JSON object, e.g. {"status": "done"}.'), "bad");
      return;
    }
    post(value);
  });
  return h(
    "div",
    { class: "answer", dataset: { requestId: String(request.id) } },
    h("div", { class: "answer-buttons" }, approve, reject, status),
    h("details", { class: "answer-custom" }, h("summary", {}, gettext("Answer with any JSON result")), editor, custom),
  );
}
