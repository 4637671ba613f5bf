// Inbox: what waits on me, answerable in place. Tool calls waiting for my approval
// (/api/approvals/?status=pending: my sessions', my groups'), tools of my sessions
// asking for a credential (/api/auth-requests/?status=pending), and long-running
// calls waiting for an answer I may give (/api/calls/).

import { answerForm, waitsFor } from "./answers.js";
import { api, ApiError } from "./api.js";
import { decideButtons, expiry, waitsForApproval } from "./approvals.js";
import { credentialForm } from "./credentials.js";
import { clear, empty, failure, h, json, loading, timeAgo, toast } from "./dom.js";

const box = document.getElementById("inbox");
const me = document.body.dataset.user;

/** A list from the API, or null when this Toolcrib has no such API (404). */
async function optional(path, options) {
  try {
    return await api(path, options);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

async function load() {
  clear(box, loading("Loading what waits on you…"));
  let approvals;
  let asks;
  let calls;
  try {
    [approvals, asks, calls] = await Promise.all([
      optional("/api/approvals/", { query: { status: "pending" } }),
      optional("/api/auth-requests/", { query: { status: "pending" } }),
      optional("/api/calls/"),
    ]);
  } catch (error) {
    clear(box, failure(error, load));
    return;
  }
  if (!approvals?.length && !asks?.length && !calls?.length) {
    clear(box, empty("Nothing is waiting for you", "Tool calls waiting for your approval or a credential, and long-running calls you may answer, show up here."));
    return;
  }
  clear(
    box,
    approvals?.length ? section("approvals", "Approvals", approvals.length, h("ul", { class: "inbox-list", id: "approval-list" }, approvals.map(approvalItem))) : null,
    asks?.length ? section("credentials", "Credentials asked for", asks.length, h("ul", { class: "inbox-list", id: "credential-requests" }, asks.map(credentialItem))) : null,
    calls?.length ? section("calls", "Long-running calls", calls.length, h("ul", { class: "inbox-list", id: "inbox-list" }, calls.map(item))) : null,
  );
}

function section(key, title, count, list) {
  const id = `inbox-${key}-title`;
  return h(
    "section",
    { class: "inbox-section", "aria-labelledby": id },
    h("h2", { class: "panel-title", id }, title, h("span", { class: "count" }, String(count))),
    list,
  );
}

/** A list item left: drop it, and show the empty state when nothing is left. */
function done(li) {
  const list = li.parentElement;
  li.remove();
  if (!list) return;
  const part = list.closest(".inbox-section");
  if (list.children.length) part.querySelector(".count").textContent = String(list.children.length);
  else part.remove();
  if (!box.querySelector(".inbox-list li")) load();
}

function approvalItem(approval) {
  const li = h(
    "li",
    { class: "card request approval", dataset: { approvalId: String(approval.id), session: approval.session, callId: approval.call_id } },
    h(
      "header",
      {},
      h("span", { class: "badge wait" }, "approval"),
      h("code", { class: "call-name" }, approval.tool_name),
      approval.approver_group ? h("span", { class: "badge wait" }, `for ${approval.approver_group}`) : h("span", { class: "badge live" }, "your session"),
      approval.expires_at ? h("span", { class: "badge bad" }, expiry(approval)) : null,
      h("span", { class: "muted small" }, timeAgo(approval.created_at)),
    ),
    h(
      "div",
      { class: "inbox-meta" },
      h("span", {}, `agent ${approval.agent || "?"}`),
      h("a", { href: `/sessions/${approval.session}/` }, "open the session"),
      h("span", {}, waitsForApproval(approval)),
    ),
    approval.hint ? h("p", { class: "hint" }, approval.hint) : null,
    h("pre", { class: "json" }, json(approval.args)),
    h(
      "div",
      { class: "answer" },
      decideButtons(approval, {
        onDecided: (run, approved) => {
          toast(`${approved ? "Approved" : "Rejected"} ${approval.tool_name}${me ? ` as ${me}` : ""}; the agent resumes.`);
          done(li);
        },
        onRefused: () => done(li),
      }),
    ),
  );
  return li;
}

function credentialItem(request) {
  const li = h(
    "li",
    { class: "card request credential", dataset: { requestId: String(request.id), session: request.session, callId: request.call_id } },
    h(
      "header",
      {},
      h("span", { class: "badge wait" }, "credential"),
      h("code", { class: "call-name" }, request.tool_name),
      h("span", { class: "badge live" }, "your session"),
      h("span", { class: "muted small" }, timeAgo(request.created_at)),
    ),
    h(
      "div",
      { class: "inbox-meta" },
      h("span", {}, `agent ${request.agent || "?"}`),
      h("a", { href: `/sessions/${request.session}/` }, "open the session"),
      h("span", {}, `asks for ${request.credential_key} (${request.scheme})`),
    ),
    h(
      "div",
      { class: "answer" },
      credentialForm(request, {
        onAnswered: () => {
          toast(`Credential sent to ${request.tool_name}; the agent resumes.`);
          done(li);
        },
        onRefused: () => done(li),
      }),
    ),
  );
  return li;
}

function item(call) {
  const li = h(
    "li",
    { class: "card request", dataset: { callId: call.call_id } },
    h(
      "header",
      {},
      h("code", { class: "call-name" }, call.name),
      call.answered_by_group ? h("span", { class: "badge wait" }, `for ${call.answered_by_group}`) : h("span", { class: "badge live" }, "your session"),
      h("span", { class: "muted small" }, timeAgo(call.created_at)),
    ),
    h(
      "div",
      { class: "inbox-meta" },
      h("span", {}, `agent ${call.agent || "?"}`),
      h("a", { href: `/sessions/${call.session}/` }, "open the session"),
      h("span", {}, waitsFor(call)),
    ),
    h("pre", { class: "json" }, json(call.args)),
    answerForm(call, () => {
      toast(`Answered ${call.name}${me ? ` as ${me}` : ""}; the agent resumes.`);
      done(li);
    }),
  );
  return li;
}

load();
