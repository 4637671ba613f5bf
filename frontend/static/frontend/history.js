// A session's history, a page at a time: the page opens at the latest events
// (GET events/?before=end&limit=) and pages back (?before=<first shown seq>) as the
// reader scrolls up to a sentinel at the top, or presses "Load earlier events".
// A page never ends between a call and its result when a few more pages join them.

import { api } from "./api.js";
import { h } from "./dom.js";
import { gettext } from "./i18n.js";

export const PAGE_SIZE = 150; // events a page; the server allows up to 5000
const REACH_PAGES = 4; // pages read at most, past a full one, to join calls and results

export class History {
  /**
   * @param {import("./timeline.js").Timeline} timeline
   * @param {string} sessionId
   */
  constructor(timeline, sessionId, { pageSize = PAGE_SIZE, path = null } = {}) {
    this.timeline = timeline;
    this.sessionId = sessionId;
    // Where the events are read: the session's own, or a shared link's (shared.js).
    this.path = path || `/api/sessions/${sessionId}/events/`;
    this.pageSize = pageSize;
    this.complete = false; // the session's first event is shown
    this.loading = null; // the page being read, a promise
    this.button = h("button", { type: "button", class: "button ghost small", id: "load-earlier" }, gettext("Load earlier events"));
    this.button.addEventListener("click", () => this.loadOlder({ focus: true }));
    this.edge = h("div", { class: "history-edge", id: "history-edge", hidden: true }, this.button);
    timeline.list.before(this.edge);
  }

  /** Start reading the latest page now (beside the page's other first calls). */
  prefetch() {
    if (!this.first) this.first = this.read("end");
    return this.first;
  }

  /** Draw the latest page; returns how many events it drew. */
  async open() {
    const frames = await this.prefetch();
    this.timeline.applyAll(frames);
    this.timeline.scrollToEnd();
    this.showEdge();
    this.watch();
    // bench/session_open.py reads when the first page reached the screen.
    requestAnimationFrame(() => performance.mark("toolcrib:timeline-painted"));
    return frames.length;
  }

  /** Draw the page before the first shown event; false when there is none. */
  loadOlder({ focus = false } = {}) {
    if (this.complete || !Number.isFinite(this.timeline.firstSeq)) return Promise.resolve(false);
    if (!this.loading) {
      this.loading = this.readOlder().finally(() => {
        this.loading = null;
      });
    }
    return this.loading.then((drawn) => {
      // The button went with the page: keep the keyboard on the edge of the history.
      if (focus) (this.complete ? this.timeline.scroller : this.button).focus();
      return drawn;
    });
  }

  async readOlder() {
    // aria-disabled, not disabled: a disabled button would drop the keyboard's focus.
    this.button.setAttribute("aria-disabled", "true");
    this.button.textContent = gettext("Loading earlier events…");
    try {
      const frames = await this.read(String(this.timeline.firstSeq));
      this.timeline.prepend(frames);
      return frames.length > 0;
    } finally {
      this.button.removeAttribute("aria-disabled");
      this.button.textContent = gettext("Load earlier events");
      this.showEdge();
    }
  }

  /** A page before `before`, reaching a few pages further to join calls and results. */
  async read(before) {
    let frames = [];
    for (let pages = 0; pages <= REACH_PAGES; pages += 1) {
      const bound = frames.length ? String(frames[0].seq) : before;
      const page = await api(this.path, { query: { before: bound, limit: this.pageSize } });
      frames = [...page, ...frames];
      if (page.length < this.pageSize) {
        this.complete = true;
        break;
      }
      if (!this.timeline.missingCalls(frames)) break;
    }
    return frames;
  }

  showEdge() {
    const empty = this.timeline.size === 0;
    this.edge.hidden = empty;
    this.edge.dataset.state = this.complete ? "start" : "more";
    if (this.complete) this.edge.replaceChildren(gettext("The start of this session"));
  }

  /** Page back when the top of the history scrolls into view. */
  watch() {
    if (this.complete || !("IntersectionObserver" in window)) return;
    this.observer = new IntersectionObserver(
      (entries) => {
        if (!entries.some((entry) => entry.isIntersecting)) return;
        this.loadOlder().then(() => this.recheck());
      },
      { root: this.timeline.scroller, rootMargin: "600px 0px 0px 0px" },
    );
    this.observer.observe(this.edge);
  }

  /** Still at the top after a page (a short one, a tall screen): read on. */
  recheck() {
    if (this.complete) {
      this.observer.disconnect();
      return;
    }
    this.observer.unobserve(this.edge);
    this.observer.observe(this.edge);
  }
}
