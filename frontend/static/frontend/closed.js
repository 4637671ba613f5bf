// A closed session: the page shows no composer and no Close button, but a notice that
// says so and what to do instead: start a new session with the same agent, which a
// message the closed session refused (its draft) goes on to, typed as it was.

import { api } from "./api.js";
import { dateTime, h, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const DRAFT_KEY = "toolcrib:draft:";

/**
 * Replace `composer` with the closed session's notice (once; again with a new draft).
 * @param {HTMLElement} composer the composer form (hidden here)
 * @param {object} session the session as GET /api/sessions/{id}/ answers it
 * @param {string} draft text the user typed and could not send, if any
 */
export function showClosedNotice(composer, session, draft = "") {
  composer.hidden = true;
  const old = document.getElementById("closed-notice");
  const agent = session.agent || session.app_name || gettext("the agent");
  const start = h("button", { type: "button", class: "button primary", id: "new-session" }, interpolate(gettext("Start a new session with %(agent)s"), { agent }, true));
  start.addEventListener("click", () => startAgain(start, session, draft));
  const when = session.closed_at ? ` ${dateTime(session.closed_at)}` : "";
  const notice = h(
    "section",
    { class: "closed-notice", id: "closed-notice", role: "status", "aria-labelledby": "closed-title" },
    h("h2", { id: "closed-title", class: "closed-title" }, gettext("This session is closed")),
    h("p", {}, interpolate(gettext("It was closed%(when)s: it keeps its history and is in %(agent)s's memory, but takes no new messages. To go on, start a new session with %(agent)s."), { when, agent }, true)),
    draft
      ? h(
          "div",
          { class: "closed-draft" },
          h("p", { class: "small" }, gettext("Your message was not sent. It is kept here, and goes into the new session's message box:")),
          h("pre", { class: "draft-text", id: "unsent-draft", tabindex: "0" }, draft),
        )
      : null,
    h("div", { class: "actions" }, start),
  );
  if (old) old.replaceWith(notice);
  else composer.after(notice);
}

async function startAgain(button, session, draft) {
  button.disabled = true;
  try {
    const fresh = await api("/api/sessions/", { method: "POST", body: { agent: session.agent } });
    if (draft) sessionStorage.setItem(DRAFT_KEY + fresh.id, draft);
    window.location.assign(`/sessions/${encodeURIComponent(fresh.id)}/`);
  } catch (error) {
    button.disabled = false;
    toast(interpolate(gettext("Could not start a new session: %(error)s"), { error: error.message }, true), "bad");
  }
}

/** The draft a closed session handed to this new one, once (then forgotten). */
export function takeDraft(sessionId) {
  const key = DRAFT_KEY + sessionId;
  let draft = "";
  try {
    draft = sessionStorage.getItem(key) || "";
    sessionStorage.removeItem(key);
  } catch {
    // storage off: nothing was handed over
  }
  return draft;
}
