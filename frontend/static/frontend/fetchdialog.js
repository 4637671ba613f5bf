// A dialog showing what one GET answers, fetched when it opens (never before): a
// title, a line under it, a Close button and a body. A second open aborts the fetch
// under way; closing aborts it too, empties the body and gives the focus back to
// what opened it. The event inspector (inspector.js) and the trace view (trace.js).

import { api, ApiError } from "./api.js";
import { clear, h } from "./dom.js";
import { gettext } from "./i18n.js";

export class FetchDialog {
  /** `id` the dialog's; `prefix` its title's, meta line's and body's ("<prefix>-title"). */
  constructor({ id, prefix, className }) {
    this.id = id;
    this.prefix = prefix;
    this.className = className;
    this.dialog = null;
    this.opener = null;
    this.loading = null;
  }

  ensure() {
    if (this.dialog) return this.dialog;
    this.title = h("h2", { id: `${this.prefix}-title`, class: "preview-title" });
    this.meta = h("p", { class: "muted small", id: `${this.prefix}-meta` });
    this.body = h("div", { class: "preview-body", id: `${this.prefix}-body` });
    const close = h("button", { type: "button", class: "button ghost small" }, gettext("Close"));
    this.dialog = h(
      "dialog",
      { class: `preview ${this.className}`, id: this.id, "aria-labelledby": `${this.prefix}-title` },
      h("header", { class: "preview-head" }, h("div", {}, this.title, this.meta), h("div", { class: "preview-actions" }, close)),
      this.body,
    );
    close.addEventListener("click", () => this.dialog.close());
    this.dialog.addEventListener("close", () => {
      if (this.loading) this.loading.abort();
      clear(this.body);
      if (this.opener && this.opener.isConnected) this.opener.focus();
    });
    document.body.append(this.dialog);
    return this.dialog;
  }

  /**
   * Open titled `title`, fetch `url` and hand its answer to `show`; a 404 reads
   * `missing`, any other failure "`failed`: <why>". `from` gets the focus back.
   */
  async open({ url, title, from = null, missing, failed, show }) {
    this.opener = from || document.activeElement;
    const dialog = this.ensure();
    this.title.textContent = title;
    this.meta.textContent = "";
    clear(this.body, h("p", { class: "muted", role: "status" }, gettext("Loading…")));
    if (!dialog.open) dialog.showModal();
    if (this.loading) this.loading.abort();
    const loading = (this.loading = new AbortController());
    try {
      show(await api(url, { signal: loading.signal }));
    } catch (error) {
      if (error.name === "AbortError") return;
      const gone = error instanceof ApiError && error.status === 404;
      clear(this.body, h("p", { class: "error-box", role: "alert" }, gone ? missing : `${failed}: ${error.message}`));
    }
  }
}
