// Who wrote in a session: a banner when the session is not yours (staff see anyone's),
// and, on a user message, who sent it when that is not the session's owner.

import { h } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

/** The signed-in user's username (base.html puts it on <body>). */
export function me() {
  return document.body.dataset.user || "";
}

/** The owner's username of a session as the API gives it, or "". */
export function ownerName(session) {
  return (session && session.owner && session.owner.username) || "";
}

/** Put the "not your session" banner before `anchor` when the session is someone else's. */
export function showOwnerBanner(anchor, session) {
  const owner = ownerName(session);
  if (!owner || owner === me() || document.getElementById("owner-banner")) return;
  anchor.before(
    h(
      "p",
      { class: "owner-banner", id: "owner-banner", role: "note" },
      h("strong", {}, interpolate(gettext("You are viewing %(owner)s's session as staff"), { owner }, true)),
      gettext("; messages you send are marked as yours."),
    ),
  );
}

/**
 * "sent by sam" on a user message whose sender is not the session's owner, else null.
 * @param {object} event a wire event (`sender`: {id, username} or null)
 * @param {string} owner the session owner's username
 */
export function senderNote(event, owner) {
  const sender = event.sender && event.sender.username;
  if (event.kind !== "user_message" || !sender || sender === owner) return null;
  const mine = sender === me();
  return h("span", { class: "sender", dataset: { sender } }, mine ? interpolate(gettext("sent by you (%(sender)s)"), { sender }, true) : interpolate(gettext("sent by %(sender)s"), { sender }, true));
}
