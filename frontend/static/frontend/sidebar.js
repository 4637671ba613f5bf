// The sessions sidebar, beside the home and the open session (sidebar.html, which
// base.html includes): New chat (with the default agent, the one of my latest
// session, or one picked from its menu); my sessions grouped by last activity in the
// browser's time zone (Today, Yesterday, Previous 7 days, Older), the open one
// marked, a page at a time by the list API's cursor ("Load more"); searched (each
// found session with its matching words), by agent, archived; each row's menu
// (sidebarrow.js). Live: a session made, named or renamed on the page
// (sessiontitle.js's announcements) moves to its place; a tab that comes back into
// view reads the first page again. On a phone it is a drawer (the top bar's
// Sessions button). The keyboard shortcuts are shortcuts.js's.

import { api } from "./api.js";
import { clear, debounce, empty, failure, h, loading, toast, toDate } from "./dom.js";
import { gettext, interpolate, ngettext } from "./i18n.js";
import { bindMenu } from "./menus.js";
import { announceSession, onSessionAnnounced, onSessionGone } from "./sessiontitle.js";
import { bindShortcuts } from "./shortcuts.js";
import { fillRow, sessionRow } from "./sidebarrow.js";

const root = document.getElementById("sidebar");
const el = (id) => document.getElementById(id);

const GROUPS = [
  ["today", () => gettext("Today")],
  ["yesterday", () => gettext("Yesterday")],
  ["week", () => gettext("Previous 7 days")],
  ["older", () => gettext("Older")],
];
const DAY = 24 * 60 * 60 * 1000;

/** Which group a last activity falls in, by the browser's calendar days. */
export function groupOf(when, now = new Date()) {
  const date = toDate(when) || now;
  const start = (d) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((start(now) - start(date)) / DAY);
  if (days <= 0) return "today";
  if (days === 1) return "yesterday";
  if (days <= 7) return "week";
  return "older";
}

let agents = null; // a promise of the agents I may start a session with
/** The agents I may use (GET /api/agents/, once a page), those whose code loads. */
export function usableAgents() {
  if (!agents) agents = api("/api/agents/").then((all) => all.filter((agent) => agent.available !== false));
  return agents;
}

/** Start a session with `agent` and open it; the sidebar shows it at once. */
export async function startChat(agent, button) {
  const before = button ? button.textContent : "";
  if (button) {
    button.disabled = true;
    button.textContent = gettext("Starting…");
  }
  try {
    const session = await api("/api/sessions/", { method: "POST", body: { agent } });
    announceSession(session, { from: "new" });
    window.location.assign(`/sessions/${session.id}/`);
  } catch (error) {
    toast(interpolate(gettext("Could not start a session: %(why)s"), { why: error.message }, true), "bad");
    if (button) {
      button.disabled = false;
      button.textContent = before;
    }
  }
}

class Sidebar {
  constructor({ conversation }) {
    this.current = root.dataset.current || null;
    this.me = document.body.dataset.user || "";
    this.list = el("sessions");
    this.search = el("session-search");
    this.agentSelect = el("session-agent");
    this.archived = el("session-archived");
    this.more = el("sessions-more");
    this.count = el("sessions-count");
    this.newChat = el("new-chat");
    this.next = null;
    this.listing = 0;
    this.rows = new Map(); // session id -> its row
    this.defaultAgent = "";
    this.shown = { search: "", agent: "", archived: "" }; // the query the list shows
    this.bind();
    bindShortcuts({ conversation, newChat: () => this.startDefault(), focusSearch: () => this.focusSearch() });
  }

  bind() {
    el("session-filters").addEventListener("submit", (event) => {
      event.preventDefault();
      this.load();
    });
    this.search.addEventListener("input", debounce(() => this.load(), 300));
    this.agentSelect.addEventListener("change", () => this.load());
    this.archived.addEventListener("change", () => this.load());
    this.more.addEventListener("click", () => this.loadMore());
    this.newChat.addEventListener("click", () => this.startDefault());
    onSessionAnnounced((session, from) => {
      if (from !== "sidebar") this.upsert(session); // the sidebar's own rows are drawn
    });
    onSessionGone((id) => this.drop(id));
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden) this.refreshTop();
    });
    this.bindDrawer();
  }

  query() {
    return { search: this.search.value.trim(), agent: this.agentSelect.value, archived: this.archived.checked ? "true" : "" };
  }

  /** The plain list (no search, no filter): the one new sessions join. */
  plain(query = this.shown) {
    return !query.search && !query.agent && !query.archived;
  }

  async load() {
    const mine = ++this.listing;
    const query = this.query();
    clear(this.list, loading(gettext("Loading your sessions…")));
    this.more.hidden = true;
    let page;
    try {
      page = await api("/api/sessions/", { query });
    } catch (error) {
      if (mine === this.listing) clear(this.list, failure(error, () => this.load()));
      return;
    }
    if (mine !== this.listing) return;
    this.shown = query;
    this.rows = new Map();
    this.list.dataset.search = query.search; // what the list shows, for tests and scripts
    if (!page.results.length) {
      clear(this.list, this.noSessions(query));
      this.count.textContent = gettext("No sessions found.");
      this.next = null;
      this.list.dataset.ready = "true";
      return;
    }
    clear(this.list);
    for (const session of page.results) this.place(session, { append: true });
    this.showMore(page);
    if (this.plain(query) && !this.defaultAgent) this.defaultAgent = page.results[0].agent;
    this.list.dataset.ready = "true";
    if (this.plain(query)) this.showCurrent();
  }

  /** The open session, when it is older than the first page: in its place all the same. */
  async showCurrent() {
    if (!this.current || this.rows.has(this.current)) return;
    try {
      this.upsert(await api(`/api/sessions/${encodeURIComponent(this.current)}/`));
    } catch {
      // not mine to list
    }
  }

  noSessions(query) {
    if (query.search) return empty(gettext("No session matches"), interpolate(gettext("None of your sessions holds “%(words)s”."), { words: query.search }, true));
    if (query.archived) return empty(gettext("No archived sessions"), gettext("Sessions you archive are kept here, out of the way."));
    if (query.agent) return empty(interpolate(gettext("No sessions with %(agent)s"), { agent: query.agent }, true));
    return empty(gettext("No sessions yet"), gettext("Start one with New chat; it will be listed here."));
  }

  async loadMore() {
    const mine = this.listing;
    this.more.disabled = true;
    this.more.textContent = gettext("Loading…");
    try {
      const page = await api(this.next);
      if (mine !== this.listing) return;
      const first = page.results.find((session) => !this.rows.has(session.id));
      for (const session of page.results) this.place(session, { append: true });
      this.showMore(page);
      // Focus stays in the list: on the first session just loaded, or on the button.
      const row = first && this.rows.get(first.id);
      if (row) row.querySelector("a").focus();
    } catch (error) {
      toast(interpolate(gettext("Could not load more sessions: %(why)s"), { why: error.message }, true), "bad");
    } finally {
      this.more.disabled = false;
      this.more.textContent = gettext("Load more");
    }
  }

  showMore(page) {
    this.next = page.next;
    this.more.hidden = !this.next;
    const count = this.rows.size;
    const shown = interpolate(ngettext("%(n)s session shown", "%(n)s sessions shown", count), { n: count }, true);
    this.count.textContent = this.next ? interpolate(gettext("%(shown)s, more to load."), { shown }, true) : `${shown}.`;
  }

  /** The list a session goes in: its day's group, or in a search the one list. */
  container(session) {
    if (this.shown.search) {
      let results = this.list.querySelector("ul.sb-results");
      if (!results) {
        results = h("ul", { class: "sb-results", "aria-label": gettext("Found sessions") });
        this.list.append(results);
      }
      return results;
    }
    const key = groupOf(session.updated_at);
    let group = this.list.querySelector(`section[data-group="${key}"]`);
    if (!group) {
      const [, label] = GROUPS.find(([name]) => name === key);
      const id = `sb-group-${key}`;
      group = h("section", { class: "sb-group", dataset: { group: key }, "aria-labelledby": id }, h("h2", { class: "sb-group-title", id }, label()), h("ul", {}));
      const order = GROUPS.map(([name]) => name);
      const after = [...this.list.querySelectorAll("section[data-group]")].find((other) => order.indexOf(other.dataset.group) > order.indexOf(key));
      if (after) after.before(group);
      else this.list.append(group);
    }
    return group.querySelector("ul");
  }

  /** Put a session's row in its place: appended (a page, in order), or by its last
   * activity (news of one). */
  place(session, { append = false } = {}) {
    if (this.rows.has(session.id)) return this.rows.get(session.id);
    const row = sessionRow(session, { current: session.id === this.current, onLeave: (gone, message) => this.leave(gone, message) });
    this.rows.set(session.id, row);
    const list = this.container(session);
    if (append) {
      list.append(row);
      return row;
    }
    const at = toDate(session.updated_at);
    const later = [...list.children].find((other) => (toDate(other.dataset.updated) || 0) < at);
    if (later) later.before(row);
    else list.append(row);
    return row;
  }

  /** News of a session: shown where the plain list would have it, moved to its
   * place when its last activity changed. */
  upsert(session) {
    if (!this.mine(session) || session.archived_at) return;
    const row = this.rows.get(session.id);
    if (!row && !this.plain()) return; // a search or a filter shows what it found
    const nothing = this.list.querySelector(":scope > .state");
    if (nothing) nothing.remove();
    if (!row) {
      this.place(session);
      return;
    }
    if (row.querySelector(".title-editor, .sb-confirm")) return; // someone is at work in it
    const merged = { ...row.sessionData, ...session };
    if (!session.updated_at || session.updated_at === row.dataset.updated || !this.plain()) {
      const focused = row.contains(document.activeElement) ? document.activeElement.className : "";
      fillRow(row, merged, this.rowOptions(merged));
      const again = focused && row.querySelector(`.${focused.split(" ")[0]}`);
      if (again) again.focus();
      return;
    }
    this.forget(row);
    this.place(merged);
  }

  rowOptions(session) {
    return { current: session.id === this.current, onLeave: (gone, message) => this.leave(gone, message) };
  }

  mine(session) {
    return !session.owner || !this.me || session.owner.username === this.me;
  }

  forget(row) {
    this.rows.delete(row.dataset.session);
    const list = row.parentElement;
    row.remove();
    const group = list && list.closest("section.sb-group");
    if (group && !list.children.length) group.remove();
  }

  drop(id) {
    const row = this.rows.get(id);
    if (row) this.forget(row);
  }

  /** A row leaves the list (archived, brought back, deleted): focus stays near it. */
  leave(row, message) {
    const all = [...this.list.querySelectorAll("li.sb-item")];
    const at = all.indexOf(row);
    const next = all[at + 1] || all[at - 1];
    const wasCurrent = row.dataset.session === this.current;
    this.forget(row);
    toast(message);
    if (next) next.querySelector("a").focus();
    else this.search.focus();
    if (!this.rows.size) this.load();
    else this.showMore({ next: this.next });
    if (wasCurrent && row.dataset.deleted) window.location.assign("/");
  }

  /** The tab is back in view: sessions made or moved elsewhere join the list. */
  async refreshTop() {
    if (!this.plain() || this.list.dataset.ready !== "true") return;
    let page;
    try {
      page = await api("/api/sessions/");
    } catch {
      return; // the list stays as it was
    }
    for (const session of [...page.results].reverse()) {
      const row = this.rows.get(session.id);
      if (!row || row.dataset.updated !== session.updated_at || row.dataset.title !== (session.title || "")) this.upsert(session);
    }
  }

  setDefault(agent) {
    this.defaultAgent = agent;
    this.newChat.title = interpolate(gettext("New chat with %(agent)s (Ctrl+Shift+O)"), { agent }, true);
    let note = el("new-chat-agent");
    if (!note) {
      note = h("p", { id: "new-chat-agent", class: "sb-new-agent muted small" });
      root.querySelector(".sb-top").after(note);
      this.newChat.setAttribute("aria-describedby", note.id);
    }
    note.textContent = interpolate(gettext("with %(agent)s"), { agent }, true);
  }

  /** New chat: with the default agent, once the agents are known. */
  async startDefault() {
    await this.agentsKnown;
    if (this.defaultAgent) startChat(this.defaultAgent, this.newChat);
    else toast(gettext("No agent you may start a chat with yet: ask an administrator to add one."), "bad");
  }

  focusSearch() {
    this.openDrawer({ focus: false });
    this.search.focus();
    this.search.select();
  }

  async loadAgents() {
    let usable;
    try {
      usable = await usableAgents();
    } catch {
      return; // New chat stays off; the home says what went wrong
    }
    for (const agent of usable) this.agentSelect.append(h("option", { value: agent.name }, agent.name));
    const names = usable.map((agent) => agent.name);
    // The default: my latest session's agent, while I may still use it; else the first.
    const latest = [...this.rows.values()][0];
    const wanted = this.defaultAgent || (latest && latest.sessionData.agent);
    if (!names.includes(wanted)) this.defaultAgent = "";
    if (names.length) this.setDefault(names.includes(wanted) ? wanted : names[0]);
    const pick = el("new-chat-agents");
    pick.disabled = !names.length;
    bindMenu(pick, el("new-chat-menu"), () =>
      usable.map((agent) => ({ label: agent.name, dataset: { startAgent: agent.name }, onSelect: () => startChat(agent.name, this.newChat) })),
    );
  }

  // The drawer, on narrow screens: the top bar's Sessions button opens it.
  bindDrawer() {
    this.toggle = el("sidebar-toggle");
    this.backdrop = el("sidebar-backdrop");
    if (!this.toggle) return;
    this.toggle.addEventListener("click", () => (root.classList.contains("open") ? this.closeDrawer() : this.openDrawer()));
    el("sidebar-close").addEventListener("click", () => this.closeDrawer());
    this.backdrop.addEventListener("click", () => this.closeDrawer());
    root.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !event.defaultPrevented && root.classList.contains("open")) this.closeDrawer();
    });
  }

  drawerMode() {
    return this.toggle && getComputedStyle(this.toggle).display !== "none";
  }

  openDrawer({ focus = true } = {}) {
    if (!this.drawerMode() || root.classList.contains("open")) return;
    root.classList.add("open");
    this.backdrop.hidden = false;
    this.toggle.setAttribute("aria-expanded", "true");
    if (focus) this.newChat.focus();
  }

  closeDrawer() {
    if (!root.classList.contains("open")) return;
    root.classList.remove("open");
    this.backdrop.hidden = true;
    this.toggle.setAttribute("aria-expanded", "false");
    this.toggle.focus();
  }
}

let sidebar = null;

/** Fill the sidebar; `conversation` says the page is a session's (for its shortcuts). */
export function initSidebar({ conversation = false } = {}) {
  if (!root || sidebar) return sidebar;
  sidebar = new Sidebar({ conversation });
  sidebar.agentsKnown = sidebar.load().then(() => sidebar.loadAgents());
  return sidebar;
}
