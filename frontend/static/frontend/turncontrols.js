// Controls of a session's turns: Stop (beside Send, and Escape in the composer) while
// a run is queued or running; Edit on the last message (its text goes back to the
// composer; sending starts a new run) and Regenerate on the last answer (the last
// message again, as a new run). Earlier events stay in the timeline either way.

import { api, ApiError } from "./api.js";
import { badge, h, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const ACTIVE = new Set(["queued", "running"]);
const STOP_RETRY_MS = 5000;

export class TurnControls {
  /**
   * @param {object} parts
   * @param {string} parts.sessionId
   * @param {HTMLFormElement} parts.form the composer
   * @param {HTMLTextAreaElement} parts.input
   * @param {HTMLButtonElement} parts.stopButton
   * @param {HTMLElement} parts.timeline the timeline's list
   * @param {() => {send: (frame: object) => boolean} | null} parts.stream the live socket, if any
   * @param {(run: object) => void} parts.onRun a run started or stopped over REST
   */
  constructor({ sessionId, form, input, stopButton, timeline, stream, onRun }) {
    Object.assign(this, { sessionId, form, input, stopButton, timeline, stream, onRun });
    this.active = [];
    this.stopping = null; // the run a Stop was sent for, until it has ended
    this.closed = false;
    this.editNote = null;
    stopButton.addEventListener("click", () => this.stop());
    input.addEventListener("keydown", (event) => this.onKey(event));
    form.addEventListener("submit", () => this.leaveEdit());
    new MutationObserver(() => {
      markCutShort(timeline);
      this.placeActions();
    }).observe(timeline, { childList: true });
  }

  /** The session's runs changed: show Stop while one is queued or running. */
  update(runs, { closed = false } = {}) {
    this.active = runs.filter((run) => ACTIVE.has(run.status));
    this.closed = closed;
    this.stopButton.hidden = !this.active.length || closed;
    if (!this.active.some((run) => run.id === this.stopping)) this.stopping = null;
    this.stopButton.disabled = Boolean(this.stopping);
    this.placeActions();
  }

  onKey(event) {
    if (event.key !== "Escape" || event.isComposing) return;
    if (!this.stopButton.hidden) {
      event.preventDefault();
      this.stop();
    } else if (this.editNote) {
      event.preventDefault();
      this.leaveEdit({ clear: true });
    }
  }

  /** Stop the session's current turn: over the socket, else over REST. */
  async stop() {
    if (!this.active.length || this.stopping) return;
    const current = this.active.find((run) => run.status === "running") || this.active[0];
    this.stopping = current.id;
    this.stopButton.disabled = true;
    // Should no answer come (a refusal, say), Stop works again after a while.
    setTimeout(() => {
      if (this.stopping !== current.id) return;
      this.stopping = null;
      this.update(this.active, { closed: this.closed });
    }, STOP_RETRY_MS);
    const socket = this.stream();
    if (socket && socket.send({ type: "cancel", run: current.id })) return; // an ack, then run_finished
    try {
      this.onRun(await api(`/api/runs/${current.id}/cancel/`, { method: "POST" }));
    } catch (error) {
      this.stopping = null;
      this.stopButton.disabled = false;
      const ended = error instanceof ApiError && error.status === 409;
      toast(ended ? gettext("That turn had already ended.") : interpolate(gettext("Not stopped: %(error)s"), { error: error.message }, true), ended ? "" : "bad");
    }
  }

  /** Edit on the last message and Regenerate on the last answer, when idle. */
  placeActions() {
    for (const old of this.timeline.querySelectorAll(".turn-actions")) old.remove();
    if (this.active.length || this.closed) return;
    const items = [...this.timeline.querySelectorAll(":scope > li.item:not(.nested)")];
    const lastUser = items.findLast((item) => item.dataset.kind === "user_message");
    if (!lastUser) return;
    const text = lastUser.querySelector(".bubble-text")?.textContent || "";
    lastUser.append(actions(h("button", { type: "button", class: "button ghost small edit-message", "aria-label": gettext("Edit your last message and send it again"), onclick: () => this.edit(text) }, gettext("Edit"))));
    const answer = items.slice(items.indexOf(lastUser)).findLast((item) => item.dataset.kind === "text");
    if (!answer) return;
    answer.append(actions(h("button", { type: "button", class: "button ghost small regenerate", "aria-label": gettext("Regenerate the last answer"), onclick: () => this.regenerate() }, gettext("Regenerate"))));
  }

  /** Put the last message in the composer, to send again edited. */
  edit(text) {
    this.leaveEdit();
    this.input.value = text;
    this.input.dispatchEvent(new Event("input"));
    this.editNote = h(
      "p",
      { class: "edit-note", id: "edit-note" },
      gettext("Editing your last message: sending it starts a new turn (the earlier one stays above). "),
      h("button", { type: "button", class: "button ghost small", onclick: () => this.leaveEdit({ clear: true }) }, gettext("Cancel edit")),
    );
    this.form.dataset.mode = "edit";
    this.form.before(this.editNote);
    this.input.focus();
    this.input.setSelectionRange(text.length, text.length);
  }

  leaveEdit({ clear = false } = {}) {
    if (!this.editNote) return;
    this.editNote.remove();
    this.editNote = null;
    delete this.form.dataset.mode;
    if (clear) {
      this.input.value = "";
      this.input.dispatchEvent(new Event("input"));
      this.input.focus();
    }
  }

  /** Send the last message again, as a new run. */
  async regenerate() {
    try {
      this.onRun(await api(`/api/sessions/${encodeURIComponent(this.sessionId)}/regenerate/`, { method: "POST" }));
    } catch (error) {
      toast(interpolate(gettext("Not regenerated: %(error)s"), { error: error.message }, true), "bad");
    }
  }
}

function actions(button) {
  return h("div", { class: "turn-actions" }, button);
}

/** A stopped run's calls that were still running read "cut short", as the audit does. */
function markCutShort(timeline) {
  for (const end of timeline.querySelectorAll(':scope > li.kind-run_finished:has(.divider[data-status="cancelled"])')) {
    for (let item = end.previousElementSibling; item && item.dataset.kind !== "run_started"; item = item.previousElementSibling) {
      for (const card of item.querySelectorAll('.card.call[data-status="running"]')) {
        card.dataset.status = "cancelled";
        card.querySelector(".call-status")?.replaceChildren(badge(gettext("cut short"), "wait"));
      }
    }
  }
}
