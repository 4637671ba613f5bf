// Home: start a session with an agent; my sessions with their last activity and status,
// searched (each found session with a snippet of its matching text), filtered, renamed,
// archived and deleted, a page at a time by the API's `next` link (a cursor); the
// credentials I gave tools.

import { api } from "./api.js";
import { showCredentials } from "./credentials.js";
import { badge, clear, debounce, empty, failure, h, labelCells, loading, statusBadge, timeAgo, toast } from "./dom.js";
import { gettext, ngettext, gettext_noop, interpolate } from "./i18n.js";
import { renameInPlace } from "./sessiontitle.js";

const agentsBox = document.getElementById("agents");
const sessionsBox = document.getElementById("sessions");

async function loadAgents() {
  clear(agentsBox, loading(gettext("Loading agents…")));
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
    clear(agentsBox, empty(gettext("No agents you may use yet"), gettext("Ask an administrator to add one.")));
    return;
  }
  clear(agentsBox, h("ul", { class: "agent-picker" }, usable.map(agentOption)));
  fillAgentFilter(agents);
}

function agentOption(agent) {
  const tools = countTools(agent.tree);
  const model = agent.model_info || {};
  const button = h("button", { type: "button", class: "button primary small", dataset: { agent: agent.name }, "aria-label": interpolate(gettext("Start a session with %(name)s"), { name: agent.name }, true) }, gettext("Start"));
  button.addEventListener("click", () => start(agent.name, button));
  return h(
    "li",
    { class: "agent-option" },
    h(
      "div",
      { class: "agent-text" },
      h("div", { class: "agent-name" }, agent.name),
      h("p", { class: "description" }, agent.description || gettext("No description.")),
      h(
        "div",
        { class: "agent-meta" },
        model.offline ? badge(gettext("offline model"), "wait") : badge(model.name || agent.model || gettext("default model")),
        tools ? badge(interpolate(ngettext("%(tools)s tool", "%(tools)s tools", tools), { tools }, true)) : null,
        agent.sub_agents && agent.sub_agents.length ? badge(interpolate(ngettext("%(count)s sub-agent", "%(count)s sub-agents", agent.sub_agents.length), { count: agent.sub_agents.length }, true)) : null,
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
  button.textContent = gettext("Starting…");
  try {
    const session = await api("/api/sessions/", { method: "POST", body: { agent } });
    window.location.assign(`/sessions/${session.id}/`);
  } catch (error) {
    toast(interpolate(gettext("Could not start a session: %(error)s"), { error: error.message }, true), "bad");
    button.disabled = false;
    button.textContent = gettext("Start");
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
  clear(sessionsBox, loading(gettext("Loading your sessions…")));
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
    countLine.textContent = gettext("No sessions found.");
    return;
  }
  clear(sessionsBox, sessionsTable(page.results));
  showMore(page);
}

function noSessions(query) {
  if (query.search) return empty(gettext("No session matches"), interpolate(query.archived ? gettext("None of your archived sessions holds “%(search)s”%(agent)s.") : gettext("None of your sessions holds “%(search)s”%(agent)s."), { search: query.search, agent: query.agent ? interpolate(gettext(" with %(agent)s"), { agent: query.agent }, true) : "" }, true));
  if (query.archived) return empty(gettext("No archived sessions"), gettext("Sessions you archive are kept here, out of the way."));
  if (query.agent) return empty(interpolate(gettext("No sessions with %(agent)s"), { agent: query.agent }, true), gettext("Start one from the list of agents."));
  return empty(gettext("No sessions yet"), gettext("Start one with an agent from the list; it will be listed here."));
}

async function loadMore() {
  const mine = listing;
  moreButton.disabled = true;
  moreButton.textContent = gettext("Loading…");
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
    toast(interpolate(gettext("Could not load more sessions: %(error)s"), { error: error.message }, true), "bad");
  } finally {
    moreButton.disabled = false;
    moreButton.textContent = gettext("Load more");
  }
}

function showMore(page) {
  const table = document.getElementById("sessions-table");
  if (table) labelCells(table);
  nextPage = page.next;
  moreButton.hidden = !nextPage;
  const count = document.querySelectorAll("#sessions-table tbody tr").length;
  countLine.textContent = interpolate(ngettext("%(count)s session shown%(more)s.", "%(count)s sessions shown%(more)s.", count), { count, more: nextPage ? gettext(", more to load") : "" }, true);
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
        h("th", { scope: "col" }, gettext("Session")),
        h("th", { scope: "col" }, gettext("Agent")),
        h("th", { scope: "col" }, gettext("Last activity")),
        h("th", { scope: "col" }, gettext("Status")),
        h("th", { scope: "col", class: "num hide-phone" }, gettext("Events")),
        h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, gettext("Actions"))),
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

const WAITING_FOR = { approval: gettext_noop("waiting for approval"), credential: gettext_noop("waiting for a credential"), result: gettext_noop("waiting for a result") };

/** How a session is, in words: closed, waiting for a person (for what), running, or idle. */
function sessionBadge(session) {
  const run = session.last_run;
  if (session.status === "closed") return badge(gettext("closed"));
  if (session.status === "waiting") {
    const what = run && run.status === "waiting" ? WAITING_FOR[run.waiting_for] && gettext(WAITING_FOR[run.waiting_for]) : null;
    return badge(what || gettext("waiting for a person"), "wait");
  }
  if (session.status === "running") return statusBadge("running");
  if (!run) return h("span", { class: "muted" }, gettext("new"));
  if (run.status === "failed") return statusBadge("failed");
  return badge(gettext("idle"));
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
    untitled ? gettext("New session, no message yet") : session.title,
  );
  const name = session.title || interpolate(gettext("%(agent)s session"), { agent: session.agent }, true);
  const rename = h("button", { type: "button", class: "button ghost small", "aria-label": interpolate(gettext("Rename “%(name)s”"), { name }, true) }, gettext("Rename"));
  rename.addEventListener("click", () =>
    renameInPlace(session, link, {
      returnFocus: rename,
      onSaved: (saved) => {
        fillRow(row, { ...session, ...saved });
        row.querySelector("button").focus();
        toast(interpolate(gettext("Renamed to “%(title)s”."), { title: saved.title }, true));
      },
    }),
  );
  const archived = Boolean(session.archived_at);
  const archive = h("button", { type: "button", class: "button ghost small", "aria-label": `${archived ? gettext("Unarchive") : gettext("Archive")} “${name}”` }, archived ? gettext("Unarchive") : gettext(gettext("Archive")));
  archive.addEventListener("click", () => setArchived(row, session, !archived));
  const remove = h("button", { type: "button", class: "button ghost small danger", "aria-label": interpolate(gettext("Delete “%(name)s”"), { name }, true) }, gettext("Delete"));
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
    toast(interpolate(archived ? gettext("Could not archive the session: %(error)s") : gettext("Could not unarchive the session: %(error)s"), { error: error.message }, true), "bad");
    return;
  }
  const name = session.title || interpolate(gettext("%(agent)s session"), { agent: session.agent }, true);
  leaveList(row, archived ? interpolate(gettext("Archived “%(name)s”: tick Archived to see it."), { name }, true) : interpolate(gettext("“%(name)s” is back in your sessions."), { name }, true));
}

/** Delete asks first, in the row: what goes, and a way to keep it. */
function confirmDelete(row, session, trigger) {
  const cell = row.querySelector(".row-actions");
  const before = [...cell.childNodes];
  const name = session.title || interpolate(gettext("%(agent)s session"), { agent: session.agent }, true);
  const keep = h("button", { type: "button", class: "button small" }, gettext("Keep"));
  const sure = h("button", { type: "button", class: "button small danger-solid" }, gettext("Delete"));
  const question = h("div", { class: "confirm", role: "group", "aria-label": interpolate(gettext("Delete “%(name)s”?"), { name }, true) }, h("span", { class: "small" }, gettext("Delete it and its events for good?")), sure, keep);
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
      toast(interpolate(gettext("Could not delete the session: %(error)s"), { error: error.message }, true), "bad");
      restore();
      return;
    }
    leaveList(row, interpolate(gettext("Deleted “%(name)s”."), { name }, true));
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
