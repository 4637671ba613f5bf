// One session in the sidebar (sidebar.js): its link (the open one marked), its
// agent and, when it says something, its status; in a search, the matching words;
// and its menu: Rename (in place, sessiontitle.js), Archive or Unarchive, Delete
// (asked first, in the row). Every change is announced (sessiontitle.js), so the
// open session's header and the list follow it.

import { api } from "./api.js";
import { badge, h, statusBadge, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";
import { bindMenu } from "./menus.js";
import { announceGone, announceSession, renameInPlace } from "./sessiontitle.js";

const WAITING_FOR = {
  approval: () => gettext("waiting for approval"),
  credential: () => gettext("waiting for a credential"),
  result: () => gettext("waiting for a result"),
};

/** A session's name in words: its title, or its agent's. */
export function nameOf(session) {
  return session.title || interpolate(gettext("%(agent)s session"), { agent: session.agent || session.app_name }, true);
}

/** How a session is, when it is worth saying: closed, waiting, running, failed. */
function statusOf(session) {
  const run = session.last_run;
  if (session.status === "closed") return badge(gettext("closed"));
  if (session.status === "waiting") {
    const what = run && run.status === "waiting" && WAITING_FOR[run.waiting_for];
    return badge(what ? what() : gettext("waiting for a person"), "wait");
  }
  if (session.status === "running") return statusBadge("running");
  if (run && run.status === "failed") return statusBadge("failed");
  return null;
}

/** A search result's matching text: text nodes, the words found in <mark>. */
function snippet(parts) {
  if (!parts || !parts.length) return null;
  return h("p", { class: "snippet muted small" }, parts.map((part) => (part.match ? h("mark", {}, part.text) : part.text)));
}

/**
 * The row of `session`. `current` marks the open one; `onLeave(row, message)` takes
 * the row out of the list (archived, unarchived or deleted).
 */
export function sessionRow(session, { current, onLeave }) {
  const row = h("li", { class: "sb-item" });
  fillRow(row, session, { current, onLeave });
  return row;
}

export function fillRow(row, session, options) {
  const { current } = options;
  row.dataset.session = session.id;
  row.dataset.status = session.status || "";
  row.dataset.updated = session.updated_at || "";
  row.dataset.title = session.title || "";
  row.sessionData = session;
  const untitled = !session.title;
  const link = h(
    "a",
    { href: `/sessions/${encodeURIComponent(session.id)}/`, class: `sb-link session-link${untitled ? " untitled" : ""}`, "aria-current": current ? "page" : null },
    untitled ? gettext("New chat") : session.title,
  );
  const name = nameOf(session);
  const menuButton = h(
    "button",
    { type: "button", class: "sb-menu-button", "aria-haspopup": "menu", "aria-expanded": "false", "aria-label": interpolate(gettext("Actions for “%(name)s”"), { name }, true) },
    h("span", { "aria-hidden": "true" }, "⋯"),
  );
  const menu = h("div", { class: "sb-menu", role: "menu", "aria-label": interpolate(gettext("Actions for “%(name)s”"), { name }, true), hidden: true });
  const archived = Boolean(session.archived_at);
  bindMenu(menuButton, menu, () => [
    { label: gettext("Rename"), onSelect: () => rename(row, session, link, menuButton, options) },
    { label: archived ? gettext("Unarchive") : gettext("Archive"), onSelect: () => setArchived(row, session, !archived, options) },
    { label: gettext("Delete"), danger: true, onSelect: () => confirmDelete(row, session, menuButton, options) },
  ]);
  row.classList.toggle("current", Boolean(current));
  const found = snippet(session.snippet);
  row.replaceChildren(
    h("div", { class: "sb-row" }, link, menuButton, menu),
    h("div", { class: "sb-meta small muted" }, h("span", { class: "sb-agent" }, session.agent || session.app_name), statusOf(session)),
    ...(found ? [found] : []),
  );
}

function rename(row, session, link, menuButton, options) {
  renameInPlace(session, link, {
    returnFocus: menuButton,
    onSaved: (saved) => {
      const merged = { ...session, ...saved, snippet: session.snippet };
      fillRow(row, merged, options);
      row.querySelector(".sb-menu-button").focus();
      toast(interpolate(gettext("Renamed to “%(title)s”."), { title: saved.title }, true));
      announceSession(merged, { from: "sidebar" });
    },
  });
}

async function setArchived(row, session, archived, { onLeave }) {
  try {
    await api(`/api/sessions/${encodeURIComponent(session.id)}/`, { method: "PATCH", body: { archived } });
  } catch (error) {
    const words = archived ? gettext("Could not archive the session: %(why)s") : gettext("Could not unarchive the session: %(why)s");
    toast(interpolate(words, { why: error.message }, true), "bad");
    return;
  }
  const name = nameOf(session);
  onLeave(row, archived ? interpolate(gettext("Archived “%(name)s”: tick Archived to see it."), { name }, true) : interpolate(gettext("“%(name)s” is back in your sessions."), { name }, true));
}

/** Delete asks first, in the row: what goes, and a way to keep it. */
function confirmDelete(row, session, trigger, { onLeave }) {
  const name = nameOf(session);
  const keep = h("button", { type: "button", class: "button small" }, gettext("Keep"));
  const sure = h("button", { type: "button", class: "button small danger-solid" }, gettext("Delete"));
  const question = h(
    "div",
    { class: "confirm sb-confirm", role: "group", "aria-label": interpolate(gettext("Delete “%(name)s”?"), { name }, true) },
    h("span", { class: "small" }, gettext("Delete it and its events for good?")),
    h("span", { class: "actions" }, sure, keep),
  );
  row.append(question);
  trigger.hidden = true;
  keep.focus();
  const restore = () => {
    question.remove();
    trigger.hidden = false;
    trigger.focus();
  };
  keep.addEventListener("click", restore);
  question.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      restore();
    }
  });
  sure.addEventListener("click", async () => {
    sure.disabled = true;
    try {
      await api(`/api/sessions/${encodeURIComponent(session.id)}/`, { method: "DELETE" });
    } catch (error) {
      toast(interpolate(gettext("Could not delete the session: %(why)s"), { why: error.message }, true), "bad");
      restore();
      return;
    }
    row.dataset.deleted = "true";
    onLeave(row, interpolate(gettext("Deleted “%(name)s”."), { name }, true));
    announceGone(session.id);
  });
}
