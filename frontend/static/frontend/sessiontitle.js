// A session's title: how it reads, and renaming it in place (Enter saves, Escape
// cancels), on the session page's header and in the sessions list.

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
        },
      });
    button.addEventListener("click", rename);
    heading.addEventListener("click", rename);
  }
}
