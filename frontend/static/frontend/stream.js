// A websocket stream of docs/events.md that survives drops: it reconnects with
// `?after=<last seq>`, passes on each stored event once (deduplicated by seq) and
// reports its state (connecting, live, reconnecting, closed) for the indicator.

import { gettext, gettext_noop, interpolate } from "./i18n.js";

// A handshake nobody answers (a frozen server, a stuck proxy) is otherwise left to
// the browser, and Chromium waits 4 minutes, holding up the page's other sockets to
// the server meanwhile (one handshake at a time, RFC 6455 4.1): give it up sooner.
const CONNECT_WITHIN_MS = 10000;
const PING_EVERY_MS = 20000;
const PONG_WITHIN_MS = 8000;
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000];
const MAX_BACKOFF_MS = 15000;

// Close codes after which reconnecting cannot help.
const FINAL_CODES = {
  4401: gettext_noop("You are signed out."),
  4403: gettext_noop("You may not watch this stream."),
  4404: gettext_noop("This session does not exist, or it is not yours."),
};

export class Stream {
  /**
   * @param {string} path e.g. "/ws/sessions/<id>/"
   * @param {object} options
   *   query: extra query parameters; after: resume after this seq (null: no replay);
   *   onFrame(frame), onStatus(status, detail).
   */
  constructor(path, { query = {}, after = null, onFrame = () => {}, onStatus = () => {} } = {}) {
    this.path = path;
    this.query = query;
    this.after = after;
    this.onFrame = onFrame;
    this.onStatus = onStatus;
    this.socket = null;
    this.attempt = 0;
    this.timers = {};
    this.stopped = false;
    this.status = "idle";
  }

  url() {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(this.query)) {
      if (value !== null && value !== undefined && value !== "") params.set(key, value);
    }
    if (this.after !== null) params.set("after", String(this.after));
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    const text = params.toString();
    return `${scheme}//${window.location.host}${this.path}${text ? `?${text}` : ""}`;
  }

  connect() {
    this.stopped = false;
    this.clearTimers();
    this.setStatus(this.attempt === 0 ? "connecting" : "reconnecting");
    const socket = new WebSocket(this.url());
    this.socket = socket;
    this.timers.open = setTimeout(() => this.abandon(socket), CONNECT_WITHIN_MS);
    socket.addEventListener("open", () => {
      if (socket !== this.socket) return;
      clearTimeout(this.timers.open);
      this.attempt = 0;
      this.setStatus("live");
      this.schedulePing();
    });
    socket.addEventListener("message", (message) => {
      if (socket !== this.socket) return;
      this.receive(message.data);
    });
    socket.addEventListener("close", (event) => {
      if (socket !== this.socket) return;
      this.socket = null;
      this.clearTimers();
      if (this.stopped) return;
      if (FINAL_CODES[event.code]) {
        this.setStatus("closed", gettext(FINAL_CODES[event.code]));
        if (event.code === 4401) window.location.assign(`/login/?next=${encodeURIComponent(window.location.pathname)}`);
        return;
      }
      this.retryLater();
    });
  }

  /** Give up an attempt the server has not answered in time; retry after the backoff. */
  abandon(socket) {
    if (socket !== this.socket) return;
    this.socket = null;
    this.clearTimers();
    socket.close();
    this.retryLater();
  }

  retryLater() {
    const base = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    const delay = Math.min(MAX_BACKOFF_MS, base + Math.random() * base * 0.3);
    this.attempt += 1;
    this.setStatus("reconnecting", { inMs: delay, attempt: this.attempt });
    this.timers.retry = setTimeout(() => this.connect(), delay);
  }

  /** Reconnect at once (the indicator's "retry now", or a detected gap). */
  reconnect() {
    const socket = this.socket;
    this.socket = null;
    if (socket) socket.close();
    this.attempt = Math.max(this.attempt, 1);
    this.connect();
  }

  receive(data) {
    let frame;
    try {
      frame = JSON.parse(data);
    } catch {
      return;
    }
    if (frame.type === "pong") {
      clearTimeout(this.timers.pong);
      return;
    }
    if (frame.type === "event" && this.after !== null && frame.seq !== null && frame.seq !== undefined) {
      if (frame.seq <= this.after) return; // already seen: replay and live overlap
      if (frame.seq > this.after + 1) {
        // A gap: reconnecting replays everything after the last seq from the database.
        this.reconnect();
        return;
      }
      this.after = frame.seq;
    }
    this.onFrame(frame);
  }

  send(frame) {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(frame));
    return true;
  }

  schedulePing() {
    this.timers.ping = setTimeout(() => {
      if (!this.send({ type: "ping" })) return;
      this.timers.pong = setTimeout(() => this.reconnect(), PONG_WITHIN_MS);
      this.schedulePing();
    }, PING_EVERY_MS);
  }

  clearTimers() {
    for (const timer of Object.values(this.timers)) clearTimeout(timer);
    this.timers = {};
  }

  close() {
    this.stopped = true;
    this.clearTimers();
    const socket = this.socket;
    this.socket = null;
    if (socket) socket.close();
    this.setStatus("idle");
  }

  setStatus(status, detail) {
    this.status = status;
    this.onStatus(status, detail);
  }
}

// The states in which a click on the indicator retries at once: not live, and not
// refused for good.
const RETRYABLE = new Set(["connecting", "reconnecting"]);

/** Show a stream's state in the header's indicator; clicking it retries at once. */
export function bindIndicator(stream, element = document.getElementById("live-status")) {
  if (!element) return () => {};
  let countdown = null;
  element.addEventListener("click", () => {
    if (RETRYABLE.has(stream.status)) stream.reconnect();
  });
  return (status, detail) => {
    clearInterval(countdown);
    element.hidden = status === "idle";
    element.dataset.status = status;
    element.disabled = !RETRYABLE.has(status);
    if (status === "live") {
      element.textContent = gettext("Live");
      element.title = gettext("Connected: events arrive as they happen.");
    } else if (status === "connecting") {
      element.textContent = gettext("Connecting…");
      element.title = gettext("Not connected yet. Click to retry now.");
    } else if (status === "closed") {
      element.textContent = gettext("Disconnected");
      element.title = typeof detail === "string" ? detail : "";
    } else if (status === "reconnecting") {
      const until = Date.now() + (detail && detail.inMs ? detail.inMs : 0);
      const render = () => {
        const seconds = Math.max(0, Math.ceil((until - Date.now()) / 1000));
        element.textContent = seconds > 0 ? interpolate(gettext("Reconnecting in %(seconds)ss…"), { seconds }, true) : gettext("Reconnecting…");
      };
      render();
      element.title = gettext("Connection lost. Missed events are replayed on reconnect. Click to retry now.");
      countdown = setInterval(render, 500);
    }
  };
}
