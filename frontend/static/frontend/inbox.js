// Inbox: "Waiting on me" (GET /api/requests/: approvals I may decide, credentials my
// tools ask for, results I may post) and "My requests" (?mine=1: what I wait on from
// others, and how it was decided), one card each (requests.js), answered in place:
// an agent's request resumes its agent, an MCP client's gateway call runs for it.
// Live: every `request` frame of /ws/inbox/ (inboxfeed.js) refetches both lists, so
// nobody reloads.

import { ApiError } from "./api.js";
import { clear, debounce, empty, failure, h, loading, toast } from "./dom.js";
import { askToNotify, notificationState, onRequestFrame } from "./inboxfeed.js";
import { afterAnswer, listRequests, requestCard, requestKey } from "./requests.js";

const el = (id) => document.getElementById(id);
const TABS = {
  waiting: {
    box: el("requests-waiting"),
    count: el("count-waiting"),
    query: {},
    listId: "waiting-list",
    empty: ["Nothing is waiting for you", "Tool calls waiting for your approval, credentials your tools ask for and results you may post show up here as they happen."],
  },
  mine: {
    box: el("requests-mine"),
    count: el("count-mine"),
    query: { mine: 1, status: "all" },
    listId: "mine-list",
    empty: ["You are waiting on nobody", "When a tool of yours waits for someone else's approval, it shows up here, and so does the decision."],
  },
};
const state = { loading: false, again: false };

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
  if (!tab.box.querySelector(".inbox-list")) clear(tab.box, loading("Loading…"));
  let rows;
  try {
    rows = await listRequests(tab.query);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return;
    clear(tab.box, failure(error, load));
    return;
  }
  tab.count.textContent = rows.length ? String(rows.length) : "";
  if (!rows.length) {
    clear(tab.box, empty(...tab.empty));
    return;
  }
  let list = tab.box.querySelector(".inbox-list");
  if (!list) {
    // data-box: where the list's place is kept once it is taken out (requests.js).
    list = h("ul", { class: "inbox-list", id: tab.listId, "data-box": tab.box.id });
    clear(tab.box, list);
  }
  render(list, rows);
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
  return h("li", { dataset: { key: requestKey(request), requestId: String(request.id), session: request.session || "" } }, card);
}

function said(request, body) {
  const tool = request.tool_name || "the call";
  if (request.kind === "approval") return `${body.approved ? "Approved" : "Rejected"} ${tool}`;
  if (request.kind === "credential") return `Credential sent to ${tool}`;
  return `Answered ${tool}`;
}

// Browser notifications: asked for from this button only, never on page load.

const notifyButton = el("notify-me");
const notifyState = el("notify-state");

function showNotifyState() {
  const current = notificationState();
  notifyButton.hidden = current !== "default";
  notifyState.textContent = {
    granted: "Notifications are on for new requests.",
    denied: "Notifications are blocked for this site in your browser.",
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
