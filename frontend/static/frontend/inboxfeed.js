// The signed-in user's inbox, live on every page (base.html loads this module): the
// count of requests waiting on me on the navigation's Inbox link (GET
// /api/requests/count/, then /ws/inbox/, which reconnects with backoff), a browser
// notification for a new one where the user allowed them, and the socket's `request`
// frames for the page's own module (onRequestFrame: the inbox and the session page
// import this same module, so one socket serves them all).

import { api } from "./api.js";
import { toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";
import { refusalText } from "./refusals.js";
import { Stream } from "./stream.js";

const link = document.getElementById("nav-inbox");
const counter = document.getElementById("inbox-count");
const listeners = new Set();
let stream = null;
let fetching = null;

/** Call `listener(frame)` on every `request` frame, and with {type: "inbox"} on (re)connect. */
export function onRequestFrame(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function showCount(count) {
  if (!counter) return;
  const n = Number.isFinite(count) ? Math.max(0, count) : 0;
  counter.textContent = String(n);
  counter.hidden = n === 0;
  counter.dataset.count = String(n);
  if (link) link.setAttribute("aria-label", n ? interpolate(gettext("Inbox, %(n)s waiting on you"), { n }, true) : gettext("Inbox"));
}

/** Fetch the count again (a frame only says that something changed). */
export function refreshCount() {
  if (fetching) return fetching;
  fetching = api("/api/requests/count/")
    .then((answer) => showCount(answer && answer.count))
    .catch(() => {}) // the next frame or reconnect tries again
    .finally(() => {
      fetching = null;
    });
  return fetching;
}

function onFrame(frame) {
  if (frame.type === "inbox") {
    showCount(frame.count);
  } else if (frame.type === "request") {
    refreshCount();
    if (frame.event === "new") notify(frame.id);
  } else if (frame.type === "error") {
    toast(refusalText(frame.error), "bad"); // a refused frame, in plain words
    return;
  } else {
    return;
  }
  for (const listener of listeners) listener(frame);
}

// Notifications: only where the browser has them and the user allowed them; the
// permission is asked for by askToNotify, from a click, never on page load.

export function notificationState() {
  if (!("Notification" in window)) return "unsupported";
  return Notification.permission; // "default", "granted" or "denied"
}

export async function askToNotify() {
  if (notificationState() !== "default") return notificationState();
  return Notification.requestPermission();
}

async function notify(id) {
  if (notificationState() !== "granted") return;
  let request;
  try {
    request = await api(`/api/requests/${encodeURIComponent(id)}/`);
  } catch {
    return; // not visible to me (any more)
  }
  if (!request.may_answer || request.status !== "pending") return;
  const through = request.session ? "" : interpolate(gettext(" through %(client)s"), { client: request.agent || gettext("an MCP client") }, true);
  const who = `${request.requester ? interpolate(gettext("%(requester)s asks"), { requester: request.requester }, true) : gettext("Asked")}${through}`;
  const note = new Notification(request.title || gettext("A request waits on you"), {
    body: `${who}${request.tool_name ? ` · ${request.tool_name}` : ""}`,
    tag: `toolcrib-request-${request.id}`, // one per request, however many tabs are open
  });
  note.addEventListener("click", () => {
    window.focus();
    window.location.assign("/inbox/");
  });
}

function start() {
  if (!counter || stream) return;
  stream = new Stream("/ws/inbox/", { onFrame });
  stream.connect();
  refreshCount();
}

start();
