// A session's toolsets (docs/availability.md, "Toolset activation"): a switch each,
// saved with PATCH, and kept in step with the `tools_changed` events of the stream
// (the model, another tab or the API switching one). Read-only once closed.

import { api, ApiError } from "./api.js";
import { badge, clear, dateTime, empty, failure, h, loading, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

export class ToolsetsPanel {
  /**
   * @param {object} options box (the list's container), count (a count badge),
   *   note (a live status line), sessionId.
   */
  constructor({ box, count, note, sessionId }) {
    this.box = box;
    this.count = count;
    this.note = note;
    this.sessionId = sessionId;
    this.readOnly = false;
    this.rows = new Map(); // name -> { item, input, state, when, toolset }
    this.busy = new Set(); // names with a PATCH in flight
    this.loadingNow = false;
    this.stale = false;
    clear(box, loading(gettext("Loading toolsets…")));
  }

  url(name = "") {
    const base = `/api/sessions/${encodeURIComponent(this.sessionId)}/toolsets/`;
    return name ? `${base}${encodeURIComponent(name)}/` : base;
  }

  /** Fetch the list and draw it (again). */
  async load() {
    this.loadingNow = true;
    this.stale = false;
    if (!this.box.childElementCount) clear(this.box, loading(gettext("Loading toolsets…")));
    let toolsets;
    try {
      toolsets = await api(this.url());
    } catch (error) {
      this.loadingNow = false;
      this.rows.clear();
      this.count.textContent = "";
      if (error instanceof ApiError && error.status === 404) {
        this.showEmpty();
        return;
      }
      clear(this.box, failure(error, () => this.load()));
      return;
    }
    this.loadingNow = false;
    this.render(toolsets);
    if (this.stale) this.load(); // a change arrived while this answer was on its way
  }

  showEmpty() {
    clear(this.box, empty(gettext("No toolsets"), gettext("This agent has no toolsets you can switch on or off.")));
  }

  render(toolsets) {
    this.rows.clear();
    this.count.textContent = toolsets.length ? String(toolsets.length) : "";
    if (!toolsets.length) {
      this.showEmpty();
      return;
    }
    const items = toolsets.map((toolset) => this.item(toolset));
    clear(
      this.box,
      this.readOnly ? h("p", { class: "muted small", id: "toolsets-readonly" }, gettext("This session is closed: its toolsets can no longer be switched.")) : null,
      h("ul", { class: "toolset-list", id: "toolset-list" }, items),
    );
  }

  item(toolset) {
    const slug = toolset.name.replace(/[^\w-]/g, "_");
    const describedBy = `toolset-${slug}-about`;
    const input = h("input", {
      type: "checkbox",
      role: "switch",
      class: "toolset-switch-input",
      "aria-describedby": describedBy,
      disabled: this.readOnly,
    });
    input.checked = Boolean(toolset.active);
    const state = h("strong", { class: "toolset-state" });
    const detail = h("span", { class: "toolset-detail" });
    const when = h("p", { class: "toolset-when muted small" }, state, " · ", detail);
    input.addEventListener("change", () => this.toggle(toolset.name, input.checked));
    const item = h(
      "li",
      { dataset: { toolset: toolset.name, active: String(Boolean(toolset.active)) } },
      h(
        "div",
        { class: "toolset-line" },
        h(
          "label",
          { class: "toolset-switch" },
          input,
          h("span", { class: "toolset-switch-track", "aria-hidden": "true" }, h("span", { class: "toolset-switch-thumb" })),
          h("code", { class: "toolset-name" }, toolset.name),
        ),
        toolset.source ? badge(toolset.source) : null,
      ),
      h(
        "div",
        { id: describedBy },
        toolset.description ? h("p", { class: "toolset-description small" }, toolset.description) : null,
        toolset.tools && toolset.tools.length
          ? h("p", { class: "toolset-tools small" }, h("span", { class: "muted" }, gettext("Tools: ")), toolset.tools.map((name, i) => [i ? ", " : "", h("code", {}, name)]))
          : null,
      ),
      when,
    );
    const row = { item, input, state, detail, toolset: { ...toolset } };
    this.rows.set(toolset.name, row);
    this.show(row);
    return item;
  }

  /** Draw a row's state from row.toolset. */
  show(row) {
    const { toolset } = row;
    row.input.checked = Boolean(toolset.active);
    row.item.dataset.active = String(Boolean(toolset.active));
    row.state.textContent = toolset.active ? gettext("Active") : gettext("Inactive");
    if (toolset.changed_at) {
      row.detail.textContent = interpolate(toolset.active ? gettext("activated by %(changed_by)s, %(changed_at)s") : gettext("deactivated by %(changed_by)s, %(changed_at)s"), { changed_by: toolset.changed_by || gettext("the model"), changed_at: dateTime(toolset.changed_at) }, true);
    } else {
      row.detail.textContent = gettext("by default");
    }
  }

  async toggle(name, active) {
    const row = this.rows.get(name);
    if (!row || this.readOnly) return;
    this.busy.add(name);
    row.input.disabled = true;
    row.item.setAttribute("aria-busy", "true");
    try {
      const saved = await api(this.url(name), { method: "PATCH", body: { active } });
      row.toolset = { ...row.toolset, ...saved };
      this.say(interpolate(saved.active ? gettext("%(name)s is now active.") : gettext("%(name)s is now inactive."), { name }, true));
    } catch (error) {
      // Put the switch back as it was, and say why.
      toast(interpolate(active ? gettext("%(name)s not activated: %(error)s") : gettext("%(name)s not deactivated: %(error)s"), { name, error: error.message }, true), "bad");
    } finally {
      this.busy.delete(name);
      row.item.removeAttribute("aria-busy");
      row.input.disabled = this.readOnly;
      this.show(row);
    }
  }

  /** A live `tools_changed` event: `toolsets` is {name: active}, `text` who did it. */
  apply(toolsets, { text = "", when = null } = {}) {
    if (!toolsets || typeof toolsets !== "object") return;
    if (this.loadingNow) {
      this.stale = true;
      return;
    }
    let unknown = false;
    let changed = false;
    for (const [name, active] of Object.entries(toolsets)) {
      const row = this.rows.get(name);
      if (!row) {
        unknown = true;
        continue;
      }
      if (this.busy.has(name)) continue; // the PATCH's answer draws it
      if (Boolean(row.toolset.active) === Boolean(active)) continue;
      row.toolset = { ...row.toolset, active: Boolean(active), changed_at: when || new Date().toISOString(), changed_by: null };
      this.show(row);
      if (text) row.detail.textContent = `${text.replace(/\.$/, "")}, ${dateTime(when || new Date())}`;
      changed = true;
    }
    if (unknown) this.load();
    if (changed) {
      this.say(text || gettext("The toolsets changed."));
      const panel = this.box.closest(".panel");
      if (panel) {
        panel.classList.remove("flash");
        void panel.offsetWidth; // restart the highlight animation
        panel.classList.add("flash");
      }
    }
  }

  say(text) {
    this.note.textContent = text;
  }

  /** A closed session keeps its toolsets as they were. */
  setReadOnly(readOnly) {
    if (this.readOnly === readOnly) return;
    this.readOnly = readOnly;
    if (this.rows.size) {
      for (const row of this.rows.values()) row.input.disabled = readOnly || this.busy.has(row.toolset.name);
      const existing = this.box.querySelector("#toolsets-readonly");
      if (readOnly && !existing) {
        this.box.prepend(h("p", { class: "muted small", id: "toolsets-readonly" }, gettext("This session is closed: its toolsets can no longer be switched.")));
      } else if (!readOnly && existing) existing.remove();
    }
  }
}
