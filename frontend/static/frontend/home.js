// Home: start a session with an agent; my sessions with their last activity and status,
// searched (each found session with a snippet of its matching text), filtered, renamed,
// archived and deleted, a page at a time by the API's `next` link (a cursor); the
// credentials I gave tools.

import { api } from "./api.js";
import { showCredentials } from "./credentials.js";
import { badge, clear, debounce, empty, failure, h, labelCells, loading, statusBadge, timeAgo, toast } from "./dom.js";
import { renameInPlace } from "./sessiontitle.js";

const agentsBox = document.getElementById("agents");
const sessionsBox = document.getElementById("sessions");

async function loadAgents() {
  clear(agentsBox, loading("Loading agents…"));
  let agents;
  try {
    agents = await api("/api/agents/");
  } catch (error) {
    clear(agentsBox, failure(error, loadAgents));
    return;
  }
  // Staff are also listed the agents whose code does not load: none to start.
  const usable = agents.filter((agent) => agent.available !== false);
  if (!usable.length) {
    clear(agentsBox, empty("No agents you may use yet", "Ask an administrator to add one."));
    return;
  }
  clear(agentsBox, h("ul", { class: "agent-picker" }, usable.map(agentOption)));
  fillAgentFilter(agents);
}

function agentOption(agent) {
  const tools = countTools(agent.tree);
  const model = agent.model_info || {};
  const button = h("button", { type: "button", class: "button primary small", dataset: { agent: agent.name }, "aria-label": `Start a session with ${agent.name}` }, "Start");
  button.addEventListener("click", () => start(agent.name, button));
  return h(
    "li",
    { class: "agent-option" },
    h(
      "div",
      { class: "agent-text" },
      h("div", { class: "agent-name" }, agent.name),
      h("p", { class: "description" }, agent.description || "No description."),
      h(
        "div",
        { class: "agent-meta" },
        model.offline ? badge("offline model", "wait") : badge(model.name || agent.model || "default model"),
        tools ? badge(`${tools} tool${tools === 1 ? "" : "s"}`) : null,
        agent.sub_agents && agent.sub_agents.length ? badge(`${agent.sub_agents.length} sub-agent${agent.sub_agents.length === 1 ? "" : "s"}`) : null,
      ),
    ),
    button,
  );
}

function countTools(tree) {
  if (!tree || tree.error) return 0;
  return (tree.tools || []).length + (tree.sub_agents || []).reduce((sum, sub) => sum + countTools(sub), 0);
}

async function start(agent, button) {
  button.disabled = true;
  button.textContent = "Starting…";
  try {
    const session = await api("/api/sessions/", { method: "POST", body: { agent } });
    window.location.assign(`/sessions/${session.id}/`);
  } catch (error) {
    toast(`Could not start a session: ${error.message}`, "bad");
    button.disabled = false;
    button.textContent = "Start";
  }
}

// The sessions list: a page at a time ("Load more"), searched, by agent, archived or not.
const filters = document.getElementById("session-filters");
const searchInput = document.getElementById("session-search");
const agentSelect = document.getElementById("session-agent");
const archivedBox = document.getElementById("session-archived");
const moreButton = document.getElementById("sessions-more");
const countLine = document.getElementById("sessions-count");
let nextPage = null; // the next page's URL, or null
let shownIds = new Set();
let listing = 0; // the latest load: an older answer arriving late is dropped

function sessionQuery() {
  return {
    search: searchInput.value.trim(),
    agent: agentSelect.value,
    archived: archivedBox.checked ? "true" : "",
  };
}

async function loadSessions() {
  const mine = ++listing;
  const query = sessionQuery();
  clear(sessionsBox, loading("Loading your sessions…"));
  moreButton.hidden = true;
  let page;
  try {
    page = await api("/api/sessions/", { query });
  } catch (error) {
    if (mine === listing) clear(sessionsBox, failure(error, loadSessions));
    return;
  }
  if (mine !== listing) return;
  // What the list now shows, for tests and scripts that wait for a search.
  sessionsBox.dataset.search = query.search;
  shownIds = new Set();
  if (!page.results.length) {
    clear(sessionsBox, noSessions(query));
    countLine.textContent = "No sessions found.";
    return;
  }
  clear(sessionsBox, sessionsTable(page.results));
  showMore(page);
}

function noSessions(query) {
  if (query.search) return empty("No session matches", `None of your${query.archived ? " archived" : ""} sessions holds “${query.search}”${query.agent ? ` with ${query.agent}` : ""}.`);
  if (query.archived) return empty("No archived sessions", "Sessions you archive are kept here, out of the way.");
  if (query.agent) return empty(`No sessions with ${query.agent}`, "Start one from the list of agents.");
  return empty("No sessions yet", "Start one with an agent from the list; it will be listed here.");
}

async function loadMore() {
  const mine = listing;
  moreButton.disabled = true;
  moreButton.textContent = "Loading…";
  try {
    const page = await api(nextPage);
    if (mine !== listing) return;
    const body = document.querySelector("#sessions-table tbody");
    const firstNew = page.results.find((session) => !shownIds.has(session.id));
    body.append(...newRows(page.results));
    showMore(page);
    // Focus stays in the list: on the first row just loaded, or on the button.
    const link = firstNew && body.querySelector(`tr[data-session="${CSS.escape(firstNew.id)}"] a`);
    if (link) link.focus();
  } catch (error) {
    toast(`Could not load more sessions: ${error.message}`, "bad");
  } finally {
    moreButton.disabled = false;
    moreButton.textContent = "Load more";
  }
}

function showMore(page) {
  const table = document.getElementById("sessions-table");
  if (table) labelCells(table);
  nextPage = page.next;
  moreButton.hidden = !nextPage;
  const count = document.querySelectorAll("#sessions-table tbody tr").length;
  countLine.textContent = `${count} session${count === 1 ? "" : "s"} shown${nextPage ? ", more to load" : ""}.`;
}

function sessionsTable(sessions) {
  return h(
    "table",
    { class: "table cards", id: "sessions-table" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, "Session"),
        h("th", { scope: "col" }, "Agent"),
        h("th", { scope: "col" }, "Last activity"),
        h("th", { scope: "col" }, "Status"),
        h("th", { scope: "col", class: "num hide-phone" }, "Events"),
        h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")),
      ),
    ),
    h("tbody", {}, newRows(sessions)),
  );
}

function newRows(sessions) {
  const rows = [];
  for (const session of sessions) {
    if (shownIds.has(session.id)) continue; // moved up a page by new activity
    shownIds.add(session.id);
    rows.push(sessionRow(session));
  }
  return rows;
}

const WAITING_FOR = { approval: "waiting for approval", credential: "waiting for a credential", result: "waiting for a result" };

/** How a session is, in words: closed, waiting for a person (for what), running, or idle. */
function sessionBadge(session) {
  const run = session.last_run;
  if (session.status === "closed") return badge("closed");
  if (session.status === "waiting") {
    const what = run && run.status === "waiting" ? WAITING_FOR[run.waiting_for] : null;
    return badge(what || "waiting for a person", "wait");
  }
  if (session.status === "running") return statusBadge("running");
  if (!run) return h("span", { class: "muted" }, "new");
  if (run.status === "failed") return statusBadge("failed");
  return badge("idle");
}

/** A search result's matching text: text nodes, the words found in <mark> (never HTML). */
function snippet(parts) {
  if (!parts || !parts.length) return null;
  return h("p", { class: "snippet muted small" }, parts.map((part) => (part.match ? h("mark", {}, part.text) : part.text)));
}

function sessionRow(session) {
  const row = h("tr", { dataset: { session: session.id, status: session.status } });
  fillRow(row, session);
  return row;
}

function fillRow(row, session) {
  const untitled = !session.title;
  const link = h(
    "a",
    { href: `/sessions/${session.id}/`, class: `strong session-link${untitled ? " muted" : ""}` },
    untitled ? "New session, no message yet" : session.title,
  );
  const name = session.title || `${session.agent} session`;
  const rename = h("button", { type: "button", class: "button ghost small", "aria-label": `Rename “${name}”` }, "Rename");
  rename.addEventListener("click", () =>
    renameInPlace(session, link, {
      returnFocus: rename,
      onSaved: (saved) => {
        fillRow(row, { ...session, ...saved });
        row.querySelector("button").focus();
        toast(`Renamed to “${saved.title}”.`);
      },
    }),
  );
  const archived = Boolean(session.archived_at);
  const archive = h("button", { type: "button", class: "button ghost small", "aria-label": `${archived ? "Unarchive" : "Archive"} “${name}”` }, archived ? "Unarchive" : "Archive");
  archive.addEventListener("click", () => setArchived(row, session, !archived));
  const remove = h("button", { type: "button", class: "button ghost small danger", "aria-label": `Delete “${name}”` }, "Delete");
  remove.addEventListener("click", () => confirmDelete(row, session, remove));
  row.replaceChildren(
    h("td", { class: "session-title" }, link, snippet(session.snippet)),
    h("td", {}, session.agent || session.app_name),
    h("td", {}, timeAgo(session.updated_at)),
    h("td", {}, sessionBadge(session)),
    h("td", { class: "num hide-phone" }, String(session.last_seq)),
    h("td", { class: "row-actions" }, h("div", { class: "actions" }, rename, archive, remove)),
  );
  const table = row.closest("table");
  if (table) labelCells(table);
}

async function setArchived(row, session, archived) {
  try {
    await api(`/api/sessions/${encodeURIComponent(session.id)}/`, { method: "PATCH", body: { archived } });
  } catch (error) {
    toast(`Could not ${archived ? "archive" : "unarchive"} the session: ${error.message}`, "bad");
    return;
  }
  const name = session.title || `${session.agent} session`;
  leaveList(row, archived ? `Archived “${name}”: tick Archived to see it.` : `“${name}” is back in your sessions.`);
}

/** Delete asks first, in the row: what goes, and a way to keep it. */
function confirmDelete(row, session, trigger) {
  const cell = row.querySelector(".row-actions");
  const before = [...cell.childNodes];
  const name = session.title || `${session.agent} session`;
  const keep = h("button", { type: "button", class: "button small" }, "Keep");
  const sure = h("button", { type: "button", class: "button small danger-solid" }, "Delete");
  const question = h("div", { class: "confirm", role: "group", "aria-label": `Delete “${name}”?` }, h("span", { class: "small" }, "Delete it and its events for good?"), sure, keep);
  cell.replaceChildren(question);
  keep.focus();
  const restore = () => {
    cell.replaceChildren(...before);
    trigger.focus();
  };
  keep.addEventListener("click", restore);
  question.addEventListener("keydown", (event) => {
    if (event.key === "Escape") restore();
  });
  sure.addEventListener("click", async () => {
    sure.disabled = true;
    try {
      await api(`/api/sessions/${encodeURIComponent(session.id)}/`, { method: "DELETE" });
    } catch (error) {
      toast(`Could not delete the session: ${error.message}`, "bad");
      restore();
      return;
    }
    leaveList(row, `Deleted “${name}”.`);
  });
}

function leaveList(row, message) {
  const next = row.nextElementSibling || row.previousElementSibling;
  row.remove();
  toast(message);
  const focus = next && next.querySelector("a");
  if (focus) focus.focus();
  else searchInput.focus();
  if (!document.querySelector("#sessions-table tbody tr")) loadSessions();
}

function fillAgentFilter(agents) {
  for (const agent of agents) agentSelect.append(h("option", { value: agent.name }, agent.name));
}

filters.addEventListener("submit", (event) => {
  event.preventDefault();
  loadSessions();
});
searchInput.addEventListener("input", debounce(loadSessions, 300));
agentSelect.addEventListener("change", loadSessions);
archivedBox.addEventListener("change", loadSessions);
moreButton.addEventListener("click", loadMore);

loadAgents();
loadSessions();
showCredentials(document.getElementById("credentials"));
