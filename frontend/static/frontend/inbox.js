// Inbox: "Waiting on me" (GET /api/requests/: approvals I may decide, credentials my
// tools ask for, results I may post) and "My requests" (?mine=1: what I wait on from
// others, and how it was decided), one card each (requests.js), answered in place:
// an agent's request resumes its agent, an MCP client's gateway call runs for it.
// Live: every `request` frame of /ws/inbox/ (inboxfeed.js) refetches both lists, so
// nobody reloads. Deciding many at once: each approval I may decide has a checkbox;
// a tool filter, "select all shown", one comment, and Approve / Reject selected
// (requests.js's decideMany, which answers per request what happened).

import { ApiError } from "./api.js";
import { clear, debounce, empty, failure, h, loading, toast } from "./dom.js";
import { gettext, ngettext, gettext_noop, interpolate } from "./i18n.js";
import { askToNotify, notificationState, onRequestFrame } from "./inboxfeed.js";
import { afterAnswer, decideMany as sendDecisions, listRequests, requestCard, requestKey } from "./requests.js";

const el = (id) => document.getElementById(id);
const TABS = {
  waiting: {
    box: el("requests-waiting"),
    count: el("count-waiting"),
    query: {},
    listId: "waiting-list",
    empty: [gettext_noop("Nothing is waiting for you"), gettext_noop("Tool calls waiting for your approval, credentials your tools ask for and results you may post show up here as they happen.")],
  },
  mine: {
    box: el("requests-mine"),
    count: el("count-mine"),
    query: { mine: 1, status: "all" },
    listId: "mine-list",
    empty: [gettext_noop("You are waiting on nobody"), gettext_noop("When a tool of yours waits for someone else's approval, it shows up here, and so does the decision.")],
  },
};
const state = { loading: false, again: false, tab: "waiting" };

for (const button of document.querySelectorAll("#inbox-tabs [data-tab]")) {
  button.addEventListener("click", () => {
    history.replaceState(null, "", button.dataset.tab === "mine" ? "#mine" : "#");
    showTab(button.dataset.tab);
  });
}

function showTab(name) {
  for (const [key, tab] of Object.entries(TABS)) {
    tab.box.hidden = key !== name;
    el(`tab-${key}`).setAttribute("aria-pressed", String(key === name));
  }
  state.tab = name;
  showBulk();
}

async function load() {
  if (state.loading) {
    state.again = true; // a change arrived while the lists were on their way
    return;
  }
  state.loading = true;
  await Promise.all(Object.values(TABS).map(fill));
  state.loading = false;
  if (state.again) {
    state.again = false;
    load();
  }
}

async function fill(tab) {
  if (!tab.box.querySelector(".inbox-list")) clear(tab.box, loading(gettext("Loading…")));
  let rows;
  try {
    rows = await listRequests(tab.query);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return;
    clear(tab.box, failure(error, load));
    return;
  }
  tab.count.textContent = rows.length ? String(rows.length) : "";
  if (tab === TABS.waiting) toolChoices(rows);
  if (!rows.length) {
    clear(tab.box, empty(...tab.empty.map((text) => gettext(text))));
    if (tab === TABS.waiting) showBulk();
    return;
  }
  let list = tab.box.querySelector(".inbox-list");
  if (!list) {
    // data-box: where the list's place is kept once it is taken out (requests.js).
    list = h("ul", { class: "inbox-list", id: tab.listId, "data-box": tab.box.id });
    clear(tab.box, list);
  }
  render(list, rows);
  if (tab === TABS.waiting) showBulk();
}

/** Put `rows` in `list`, keeping the items that did not change (a comment being typed). */
function render(list, rows) {
  const kept = new Map([...list.children].map((li) => [li.dataset.key, li]));
  const items = rows.map((request) => kept.get(requestKey(request)) || item(request));
  // Moving a kept item blurs what is focused in it (a button, a comment): focus it again.
  const focused = list.contains(document.activeElement) ? document.activeElement : null;
  list.replaceChildren(...items);
  if (focused && focused.isConnected && document.activeElement !== focused) focused.focus();
}

function item(request) {
  const card = requestCard(request, {
    onAnswered: (run, answered, body) => {
      toast(`${said(answered, body)}; ${afterAnswer(answered, body)}.`);
      load();
    },
    onRefused: () => load(),
  });
  const pick = decidable(request)
    ? h(
        "label",
        { class: "bulk-pick" },
        h("input", { type: "checkbox", class: "bulk-pick-input", dataset: { requestId: String(request.id) }, "aria-label": interpolate(gettext("Select request %(id)s, %(tool_name)s, to decide many at once"), { id: request.id, tool_name: request.tool_name || gettext("a call") }, true) }),
      )
    : null;
  if (pick) pick.firstChild.addEventListener("change", countPicked);
  return h("li", { dataset: { key: requestKey(request), requestId: String(request.id), session: request.session || "", tool: request.tool_name || "" } }, pick, card);
}

/** An approval waiting on me that I may decide: one that can be decided among many. */
function decidable(request) {
  return request.kind === "approval" && request.status === "pending" && request.may_answer;
}

// Deciding many at once.

const bulk = {
  bar: el("bulk-bar"),
  all: el("bulk-all"),
  tool: el("bulk-tool"),
  count: el("bulk-count"),
  comment: el("bulk-comment"),
  approve: el("bulk-approve"),
  reject: el("bulk-reject"),
  results: el("bulk-results"),
};

function picks({ shown = true } = {}) {
  const inputs = [...TABS.waiting.box.querySelectorAll(".bulk-pick-input")];
  return shown ? inputs.filter((input) => !input.closest("li").hidden) : inputs;
}

/** The tools of the approvals I may decide, for the filter (its choice kept). */
function toolChoices(rows) {
  const tools = [...new Set(rows.filter(decidable).map((r) => r.tool_name || ""))].sort();
  const chosen = bulk.tool.value;
  bulk.tool.replaceChildren(h("option", { value: "" }, gettext("Every tool")), ...tools.map((name) => h("option", { value: name }, name || gettext("(no tool)"))));
  bulk.tool.value = tools.includes(chosen) ? chosen : "";
}

/** Show the bar where approvals can be picked; apply the tool filter to the list. */
function showBulk() {
  const any = picks({ shown: false }).length > 0;
  bulk.bar.hidden = state.tab !== "waiting" || !any;
  const tool = bulk.tool.value;
  for (const li of TABS.waiting.box.querySelectorAll(".inbox-list > li")) {
    li.hidden = Boolean(tool) && li.dataset.tool !== tool;
    const input = li.querySelector(".bulk-pick-input");
    if (li.hidden && input) input.checked = false;
  }
  countPicked();
}

function countPicked() {
  const shown = picks();
  const picked = shown.filter((input) => input.checked);
  bulk.count.textContent = picked.length ? interpolate(gettext("%(picked)s selected"), { picked: picked.length }, true) : "";
  bulk.all.checked = shown.length > 0 && picked.length === shown.length;
  bulk.approve.disabled = bulk.reject.disabled = picked.length === 0;
}

bulk.tool.addEventListener("change", showBulk);
bulk.all.addEventListener("change", () => {
  for (const input of picks()) input.checked = bulk.all.checked;
  countPicked();
});
bulk.approve.addEventListener("click", () => decideMany(true));
bulk.reject.addEventListener("click", () => decideMany(false));

const OUTCOME_WORDS = { decided: "", counted: gettext_noop("counted; it waits for another person's approval"), refused: gettext_noop("not decided") };

async function decideMany(approved) {
  const ids = picks()
    .filter((input) => input.checked)
    .map((input) => Number(input.dataset.requestId));
  if (!ids.length) return;
  bulk.approve.disabled = bulk.reject.disabled = true;
  bulk.count.textContent = gettext("Sending…");
  let results;
  try {
    results = await sendDecisions(ids, { approved, comment: bulk.comment.value.trim() });
  } catch (error) {
    toast(interpolate(gettext("Not sent: %(error)s"), { error: error.message }, true), "bad");
    countPicked();
    return;
  }
  const done = results.filter((r) => r.outcome !== "refused").length;
  bulk.results.replaceChildren(
    ...results.map((r) =>
      h(
        "li",
        { dataset: { requestId: String(r.id), outcome: r.outcome } },
        interpolate(gettext("Request %(id)s: "), { id: r.id }, true),
        r.outcome === "refused" ? interpolate(gettext("not decided: %(detail)s"), { detail: r.detail }, true) : r.outcome === "counted" ? gettext(OUTCOME_WORDS.counted) : r.status,
      ),
    ),
  );
  const others = done < results.length ? gettext("; see why the others were not") : "";
  const words = approved ? ngettext("Approved %(done)s of %(count)s%(others)s.", "Approved %(done)s of %(count)s%(others)s.", results.length) : ngettext("Rejected %(done)s of %(count)s%(others)s.", "Rejected %(done)s of %(count)s%(others)s.", results.length);
  toast(interpolate(words, { done, count: results.length, others }, true), done < results.length ? "bad" : "ok");
  bulk.comment.value = "";
  load();
}

function said(request, body) {
  const tool = request.tool_name || gettext("the call");
  if (request.kind === "approval") return interpolate(body.approved ? gettext("Approved %(tool)s") : gettext("Rejected %(tool)s"), { tool }, true);
  if (request.kind === "credential") return interpolate(gettext("Credential sent to %(tool)s"), { tool }, true);
  return interpolate(gettext("Answered %(tool)s"), { tool }, true);
}

// Browser notifications: asked for from this button only, never on page load.

const notifyButton = el("notify-me");
const notifyState = el("notify-state");

function showNotifyState() {
  const current = notificationState();
  notifyButton.hidden = current !== "default";
  notifyState.textContent = {
    granted: gettext("Notifications are on for new requests."),
    denied: gettext("Notifications are blocked for this site in your browser."),
    unsupported: "",
    default: "",
  }[current];
}

notifyButton.addEventListener("click", async () => {
  notifyButton.disabled = true;
  await askToNotify();
  notifyButton.disabled = false;
  showNotifyState();
});

const refetch = debounce(load, 150);
let connected = false;
onRequestFrame((frame) => {
  // The first connect's count comes with the lists this page just fetched.
  if (frame.type === "inbox" && !connected) {
    connected = true;
    return;
  }
  refetch();
});
showTab(window.location.hash === "#mine" ? "mine" : "waiting");
showNotifyState();
load();
