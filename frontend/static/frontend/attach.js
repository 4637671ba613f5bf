// Files in the composer: a paperclip button, drag and drop, and pasted files become
// chips (name, size, a remove ×). On send they are uploaded, one by one, as the
// session's artifacts (POST /api/sessions/{id}/artifacts/, the Artifacts panel's own
// upload, with its limits), and the message names each one the way ADK's
// SaveFilesAsArtifactsPlugin does, `[Uploaded Artifact: "name"]`, so the agent sees
// them and its artifact tools can load them by that name.

import { api } from "./api.js";
import { h, s, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const UNITS = ["bytes", "KB", "MB", "GB"];

function paperclip() {
  const attrs = { viewBox: "0 0 24 24", width: "18", height: "18", fill: "none", stroke: "currentColor", "stroke-width": "2", "stroke-linecap": "round", "stroke-linejoin": "round", "aria-hidden": "true", focusable: "false" };
  return s("svg", attrs, s("path", { d: "M21.44 11.05l-9.19 9.19a6 6 0 0 1-8.49-8.49l9.19-9.19a4 4 0 0 1 5.66 5.66l-9.2 9.19a2 2 0 0 1-2.83-2.83l8.49-8.48" }));
}

export function fileSize(bytes) {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit ? `${value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}` : interpolate(gettext("%(bytes)s bytes"), { bytes }, true);
}

/** The line a message carries for each attached file (ADK's placeholder). */
export function mention(name) {
  return interpolate(gettext("[Uploaded Artifact: \"%(name)s\"]"), { name }, true);
}

export class Attachments {
  /**
   * @param {HTMLFormElement} form the composer; gets the button, the chips and the drop zone.
   * @param {HTMLTextAreaElement} input the message field: files pasted into it attach.
   * @param {string} sessionId
   */
  constructor(form, input, sessionId) {
    this.sessionId = sessionId;
    this.input = input;
    this.pending = []; // File objects not yet uploaded
    this.uploaded = []; // names uploaded by a send that then failed: named next time
    this.busy = false;
    this.picker = h("input", { type: "file", multiple: true, hidden: true, id: "attach-input", tabindex: "-1", "aria-hidden": "true" });
    this.button = h("button", { type: "button", class: "button ghost attach", id: "attach-button", "aria-label": gettext("Attach files"), title: gettext("Attach files (or drop or paste them here)") }, paperclip());
    this.chips = h("ul", { class: "attachments", id: "attachments", "aria-label": gettext("Files to send"), hidden: true });
    form.prepend(this.chips, this.picker, this.button);
    this.button.addEventListener("click", () => this.picker.click());
    this.picker.addEventListener("change", () => {
      this.add(this.picker.files);
      this.picker.value = "";
    });
    input.addEventListener("paste", (event) => {
      const files = event.clipboardData ? [...event.clipboardData.files] : [];
      if (!files.length) return;
      event.preventDefault();
      this.add(files);
    });
    form.addEventListener("dragover", (event) => {
      if (![...(event.dataTransfer?.types || [])].includes("Files")) return;
      event.preventDefault();
      form.classList.add("dropping");
    });
    form.addEventListener("dragleave", () => form.classList.remove("dropping"));
    form.addEventListener("drop", (event) => {
      form.classList.remove("dropping");
      if (!event.dataTransfer?.files.length) return;
      event.preventDefault();
      this.add(event.dataTransfer.files);
    });
  }

  get size() {
    return this.pending.length + this.uploaded.length;
  }

  add(files) {
    for (const file of files) {
      // A file attached twice is sent once (the later one).
      this.pending = this.pending.filter((other) => other.name !== file.name);
      this.pending.push(file);
    }
    this.render();
  }

  remove(file) {
    this.pending = this.pending.filter((other) => other !== file);
    this.render();
  }

  render() {
    this.chips.hidden = !this.pending.length;
    // Files alone make a message: the text may stay empty.
    this.input.required = !this.pending.length;
    this.chips.replaceChildren(
      ...this.pending.map((file) =>
        h(
          "li",
          { class: "attachment", dataset: { name: file.name } },
          h("span", { class: "attachment-name" }, file.name),
          h("span", { class: "muted small" }, fileSize(file.size)),
          h("button", { type: "button", class: "attachment-remove", "aria-label": interpolate(gettext("Remove %(name)s"), { name: file.name }, true), onclick: () => this.remove(file) }, "×"),
        ),
      ),
    );
  }

  /**
   * Upload every attached file, then the message to send: `text` and a line per
   * file. Rejects (after saying why) if a file is refused; the files still pending
   * stay attached and those already uploaded are named by the next send.
   */
  async message(text) {
    this.busy = true;
    this.button.disabled = true;
    try {
      while (this.pending.length) {
        const file = this.pending[0];
        const saved = await this.upload(file);
        this.pending.shift();
        this.uploaded.push(saved.filename);
        this.render();
      }
    } finally {
      this.busy = false;
      this.button.disabled = false;
    }
    const lines = this.uploaded.map(mention);
    this.uploaded = [];
    return [text, lines.join("\n")].filter(Boolean).join("\n\n");
  }

  async upload(file) {
    const body = new FormData();
    body.append("file", file);
    try {
      return await api(`/api/sessions/${encodeURIComponent(this.sessionId)}/artifacts/`, { method: "POST", form: body });
    } catch (error) {
      toast(interpolate(gettext("Not sent: %(name)s was refused: %(error)s"), { name: file.name, error: error.message }, true), "bad");
      throw error;
    }
  }
}
