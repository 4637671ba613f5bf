// A session's title: how it reads, and renaming it in place (Enter saves, Escape
// cancels), on the session page's header and in the sessions sidebar; the news of a
// session made, named or renamed (announceSession) or deleted (announceGone) that
// the header and the sidebar (sidebar.js) follow, without a reload; and the title
// the server gives a session at its first message (followTitle, agents/titles.py).

import { api } from "./api.js";
import { h } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

export const TITLE_MAX_CHARS = 120; // agents.inputs.TITLE_MAX_CHARS

/** The title, or until its first message names it, its agent's name. */
export function titleOf(session) {
  return session.title || session.agent || session.app_name;
}

/**
 * Replace `shown` (the element showing the title) with a text field until the
 * person saves (Enter) or cancels (Escape, or leaving the field). `onSaved` gets the
 * session as the server now has it; focus goes back to `returnFocus` either way.
 */
export function renameInPlace(session, shown, { onSaved, returnFocus }) {
  const error = h("p", { class: "field-error small", id: `title-error-${session.id}`, role: "alert" });
  const input = h("input", {
    type: "text",
    class: "title-input",
    value: session.title,
    maxlength: String(TITLE_MAX_CHARS),
    "aria-label": gettext("Session title"),
    "aria-describedby": error.id,
    placeholder: titleOf(session),
  });
  const editor = h("span", { class: "title-editor" }, input, error);
  let busy = false;
  let closed = false;

  const close = () => {
    if (closed) return;
    closed = true;
    editor.remove();
    shown.hidden = false;
    (returnFocus || shown).focus();
  };
  const save = async () => {
    const title = input.value.trim();
    if (title === session.title) return close();
    busy = true;
    input.setAttribute("aria-busy", "true");
    try {
      const saved = await api(`/api/sessions/${encodeURIComponent(session.id)}/`, { method: "PATCH", body: { title } });
      close();
      onSaved(saved);
    } catch (failed) {
      const fields = failed.body && failed.body.title;
      error.textContent = fields ? [].concat(fields).join(" ") : failed.message;
      input.setAttribute("aria-invalid", "true");
      input.focus();
    } finally {
      busy = false;
      input.removeAttribute("aria-busy");
    }
  };
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      if (!busy) save();
    } else if (event.key === "Escape") {
      event.preventDefault();
      close();
    }
  });
  input.addEventListener("blur", () => {
    if (!busy && !error.textContent) close();
  });

  shown.hidden = true;
  shown.after(editor);
  input.focus();
  input.select();
}

const CHANGED = "toolcrib:session";
const GONE = "toolcrib:session-gone";

/** Tell the page that `session` (as the API shows it) was made, named or renamed. */
export function announceSession(session, { from = "" } = {}) {
  document.dispatchEvent(new CustomEvent(CHANGED, { detail: { session, from } }));
}

/** Tell the page that the session `id` was deleted. */
export function announceGone(id) {
  document.dispatchEvent(new CustomEvent(GONE, { detail: { id } }));
}

export function onSessionAnnounced(listener) {
  document.addEventListener(CHANGED, (event) => listener(event.detail.session, event.detail.from));
}

export function onSessionGone(listener) {
  document.addEventListener(GONE, (event) => listener(event.detail.id));
}

/**
 * The server names a session when its first turn starts (agents/titles.py), in the
 * UPDATE that starts it: until the session has a title, a stored `user_message` or
 * `run_started` frame is the moment to read it again. Gives the socket's frame
 * handler; `current()` is the page's session; the header and the sidebar follow.
 */
export function followTitle(current, heading) {
  let asking = false;
  return async (frame) => {
    const session = current();
    if (!session || session.title || asking || frame.type !== "event" || frame.seq === null) return;
    const kind = frame.event && frame.event.kind;
    if (kind !== "user_message" && kind !== "run_started") return;
    asking = true;
    try {
      const fresh = await api(`/api/sessions/${encodeURIComponent(session.id)}/`);
      if (fresh.title && !session.title) {
        session.title = fresh.title;
        showSessionTitle(session, heading);
        announceSession(fresh, { from: "server" });
      }
    } catch {
      // the next frame asks again
    } finally {
      asking = false;
    }
  };
}

/** The session page's header: the title, a Rename button, and the title itself as
 * a way to rename (a click on it). */
export function showSessionTitle(session, heading, { onSaved } = {}) {
  heading.textContent = titleOf(session);
  document.title = interpolate(gettext("%(session)s · Toolcrib"), { session: titleOf(session) }, true);
  let button = document.getElementById("rename-session");
  if (!button) {
    button = h("button", { type: "button", id: "rename-session", class: "button ghost small", "aria-label": gettext("Rename this session") }, gettext("Rename"));
    heading.after(button);
    heading.classList.add("renamable");
    heading.title = gettext("Click to rename");
    const rename = () =>
      renameInPlace(session, heading, {
        returnFocus: button,
        onSaved: (saved) => {
          session.title = saved.title;
          showSessionTitle(session, heading, { onSaved });
          if (onSaved) onSaved(saved);
          announceSession({ ...session, ...saved }, { from: "header" });
        },
      });
    button.addEventListener("click", rename);
    heading.addEventListener("click", rename);
    // Renamed elsewhere on the page (the sidebar): the header follows.
    onSessionAnnounced((changed, from) => {
      if (from === "header" || changed.id !== session.id || changed.title === session.title) return;
      session.title = changed.title;
      showSessionTitle(session, heading, { onSaved });
    });
  }
}
