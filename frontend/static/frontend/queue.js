// A session's queue of turns: the messages waiting behind the running turn, listed
// under the composer ("Queued (2)"), each with a Cancel, and a Cancel all. The list
// is the server's (GET /api/sessions/{id}/queue/), read again when a run starts or
// ends; a run the page has seen end leaves it at once, before that read answers.
// Cancelling goes over the socket when it is live (a `cancel` or `cancel_queue`
// frame), else over REST; either way every open page hears `run_finished`.

import { api } from "./api.js";
import { debounce, h, toast } from "./dom.js";
import { gettext, interpolate, ngettext } from "./i18n.js";

const PREVIEW_CHARS = 160;

export class TurnQueue {
  /**
   * @param {object} parts
   * @param {string} parts.sessionId
   * @param {HTMLElement} parts.after the element the list goes after (the composer)
   * @param {() => {send: (frame: object) => boolean} | null} parts.stream the live socket, if any
   * @param {(id: string) => boolean} parts.ended whether the page has seen run `id` end
   * @param {() => void} parts.onChange the server's list was read again
   */
  constructor({ sessionId, after, stream, ended, onChange }) {
    Object.assign(this, { sessionId, stream, ended, onChange });
    this.runs = []; // the server's queued and running runs, in the queue's order
    this.checking = false; // a read of the list is under way
    this.box = h("section", { id: "turn-queue", class: "turn-queue", hidden: true, "aria-labelledby": "turn-queue-title" });
    after.after(this.box);
    this.reload = debounce(() => this.load(), 120);
  }

  /** Read the list again soon; until it answers, `checking` says it may be stale. */
  refresh() {
    this.checking = true;
    this.reload();
  }

  async load() {
    this.checking = true;
    try {
      this.runs = await api(`/api/sessions/${encodeURIComponent(this.sessionId)}/queue/`);
    } catch {
      // The list stays as it was; the next run event reads it again.
    } finally {
      this.checking = false;
    }
    this.onChange();
  }

  /** The runs still queued or running, as far as this page knows. */
  active() {
    return this.runs.filter((run) => !this.ended(run.id));
  }

  /** Draw the queued turns (not the running one); hidden when none waits. */
  render({ closed = false } = {}) {
    const waiting = this.active().filter((run) => run.status === "queued");
    this.box.hidden = closed || !waiting.length;
    if (this.box.hidden) {
      this.box.replaceChildren();
      return;
    }
    const title = interpolate(gettext("Queued (%(count)s)"), { count: waiting.length }, true);
    this.box.replaceChildren(
      h(
        "div",
        { class: "turn-queue-head" },
        h("h2", { id: "turn-queue-title", class: "turn-queue-title" }, title),
        h("button", { type: "button", class: "button ghost small", id: "cancel-queue", onclick: () => this.cancelAll() }, gettext("Cancel all")),
      ),
      h(
        "ol",
        { class: "turn-queue-list", "aria-label": ngettext("A message waiting for its turn", "Messages waiting for their turn", waiting.length) },
        waiting.map((run) => this.item(run)),
      ),
    );
  }

  item(run) {
    const text = run.text || gettext("(an answer to a request)");
    const preview = text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
    return h(
      "li",
      { class: "turn-queue-item", dataset: { run: run.id }, title: text },
      h("span", { class: "turn-queue-text" }, preview),
      h(
        "button",
        { type: "button", class: "button ghost small cancel-queued", "aria-label": interpolate(gettext("Cancel the waiting message: %(text)s"), { text: preview }, true), onclick: (event) => this.cancel(run, event.currentTarget) },
        gettext("Cancel"),
      ),
    );
  }

  /** Cancel one waiting turn: it never runs. */
  async cancel(run, button) {
    button.disabled = true;
    const socket = this.stream();
    if (socket && socket.send({ type: "cancel", run: run.id })) return; // then run_finished
    try {
      await api(`/api/runs/${encodeURIComponent(run.id)}/cancel/`, { method: "POST" });
    } catch (error) {
      button.disabled = false;
      toast(interpolate(gettext("Not cancelled: %(why)s"), { why: error.message }, true), "bad");
    }
    this.refresh();
  }

  /** Cancel every waiting turn; with `running`, the running one too (Stop all). */
  async cancelAll({ running = false } = {}) {
    const socket = this.stream();
    if (socket && socket.send({ type: "cancel_queue", running })) return; // then run_finished each
    try {
      await api(`/api/sessions/${encodeURIComponent(this.sessionId)}/queue/cancel/`, { method: "POST", body: { running } });
    } catch (error) {
      toast(interpolate(gettext("Not cancelled: %(why)s"), { why: error.message }, true), "bad");
    }
    this.refresh();
  }
}
