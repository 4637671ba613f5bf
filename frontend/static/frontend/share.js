// Share a session (agents.shares): the session page's Share button and its dialog.
// The owner makes a read-only link to the conversation as it is now (shown once:
// only its digest is stored), picks when it expires and, if staff allow it, lets
// anyone with the link read it without signing in; she and staff see each link's
// views (who, when, from where) and revoke it.

import { api } from "./api.js";
import { copyButton } from "./clipboard.js";
import { badge, clear, dateTime, empty, failure, h, loading, toast } from "./dom.js";
import { gettext, interpolate, ngettext } from "./i18n.js";

const EXPIRIES = [
  ["", () => gettext("Never")],
  ["1", () => gettext("In 1 day")],
  ["7", () => gettext("In 7 days")],
  ["30", () => gettext("In 30 days")],
];
const TONES = { active: "ok", revoked: "bad", expired: "wait" };

/** Show the Share button of session `sessionId` to whoever may list its links. */
export async function bindShare(sessionId) {
  const button = document.getElementById("share-session");
  if (!button) return;
  const base = `/api/sessions/${encodeURIComponent(sessionId)}/shares/`;
  let session;
  try {
    [session] = await Promise.all([api(`/api/sessions/${encodeURIComponent(sessionId)}/`), api(base)]);
  } catch {
    return; // not hers to share (or the server is away): no button
  }
  const mine = Boolean(session.owner) && session.owner.username === document.body.dataset.user;
  const dialog = new ShareDialog(base, { mine });
  document.body.append(dialog.element);
  button.hidden = false;
  button.addEventListener("click", () => dialog.open());
}

class ShareDialog {
  constructor(base, { mine }) {
    this.base = base;
    this.mine = mine;
    this.list = h("div", { id: "share-links", class: "share-links" });
    this.created = h("div", { id: "share-created", class: "share-created", hidden: true });
    this.form = mine ? this.createForm() : h("p", { class: "muted small" }, gettext("Only the session's owner shares it; as staff you may revoke its links."));
    const close = h("button", { type: "button", class: "button ghost small" }, gettext("Close"));
    close.addEventListener("click", () => this.element.close());
    this.element = h(
      "dialog",
      { id: "share-dialog", class: "approval-dialog share-dialog", "aria-labelledby": "share-title" },
      h("h2", { id: "share-title", class: "panel-title" }, gettext("Share this session")),
      h("p", { class: "muted small" }, gettext("A read-only link to the conversation as it is now: later messages are not shared. Secrets stay hidden, as on this page.")),
      this.form,
      this.created,
      h("h3", { class: "share-subtitle" }, gettext("Links")),
      this.list,
      h("div", { class: "answer-buttons" }, close),
    );
  }

  async open() {
    if (!this.element.open) this.element.showModal();
    this.created.hidden = true;
    clear(this.created);
    await Promise.all([this.refresh(), this.mine ? this.loadSettings() : null]);
  }

  createForm() {
    this.expiry = h("select", { id: "share-expiry" }, EXPIRIES.map(([value, words]) => h("option", { value }, words())));
    this.anyone = h("input", { type: "checkbox", id: "share-anyone" });
    this.anyoneRow = h("label", { class: "check", id: "share-anyone-row", hidden: true }, this.anyone, " ", gettext("Anyone with the link, without signing in"));
    const submit = h("button", { type: "submit", class: "button primary small", id: "share-create" }, gettext("Create link"));
    const form = h(
      "form",
      { class: "share-form" },
      h("label", { for: "share-expiry" }, gettext("Expires")),
      this.expiry,
      this.anyoneRow,
      h("p", { class: "muted small" }, gettext("People signed in here can open the link.")),
      h("div", { class: "answer-buttons" }, submit),
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        const body = { anyone: !this.anyoneRow.hidden && this.anyone.checked };
        if (this.expiry.value) body.expires_in_days = Number(this.expiry.value);
        const share = await api(this.base, { method: "POST", body });
        this.showCreated(share);
        await this.refresh();
      } catch (error) {
        toast(error.message, "bad");
      } finally {
        submit.disabled = false;
      }
    });
    return form;
  }

  async loadSettings() {
    try {
      const settings = await api("/api/share-settings/");
      this.anyoneRow.hidden = !settings.anyone_with_link;
      if (this.anyoneRow.hidden) this.anyone.checked = false;
    } catch {
      this.anyoneRow.hidden = true;
    }
  }

  showCreated(share) {
    const link = h("input", { type: "text", id: "share-url", readonly: true, value: share.url, "aria-label": gettext("The new link") });
    link.addEventListener("focus", () => link.select());
    clear(
      this.created,
      h("p", { class: "small" }, h("strong", {}, gettext("Copy the link now:")), " ", gettext("it is shown only this once. Make another if you lose it.")),
      h("div", { class: "share-url-row" }, link, copyButton(() => share.url, { label: gettext("Copy link") })),
    );
    this.created.hidden = false;
  }

  async refresh() {
    clear(this.list, loading(gettext("Loading the links…")));
    try {
      const shares = await api(this.base);
      clear(this.list, shares.length ? h("ul", { class: "share-list" }, shares.map((share) => this.row(share))) : empty(gettext("Not shared yet")));
    } catch (error) {
      clear(this.list, failure(error, () => this.refresh()));
    }
  }

  row(share) {
    const expires = share.expires_at ? interpolate(gettext("expires %s"), [dateTime(share.expires_at)]) : gettext("never expires");
    const views = interpolate(ngettext("%s view", "%s views", share.views), [share.views]);
    const who = share.anyone ? gettext("anyone with the link") : gettext("people signed in");
    const details = h("div", { class: "share-views", hidden: true });
    const viewsButton = h("button", { type: "button", class: "link-button share-views-button", "aria-expanded": "false" }, views);
    viewsButton.addEventListener("click", () => this.toggleViews(share, viewsButton, details));
    const revoke = share.status === "active" ? h("button", { type: "button", class: "button ghost small share-revoke" }, gettext("Revoke")) : null;
    if (revoke) revoke.addEventListener("click", () => this.revoke(share, revoke));
    return h(
      "li",
      { class: "share-row", dataset: { share: String(share.id), status: share.status } },
      h(
        "div",
        { class: "share-line" },
        badge(statusWords(share.status), TONES[share.status] || ""),
        h("span", { class: "small" }, interpolate(gettext("Made %(when)s · %(who)s · %(expires)s"), { when: dateTime(share.created_at), who, expires }, true)),
      ),
      h("div", { class: "share-line" }, viewsButton, revoke),
      details,
    );
  }

  async toggleViews(share, button, details) {
    const opening = details.hidden;
    details.hidden = !opening;
    button.setAttribute("aria-expanded", String(opening));
    if (!opening) return;
    clear(details, loading());
    try {
      const views = await api(`${this.base}${share.id}/views/`);
      const items = views.map((view) =>
        h("li", {}, `${dateTime(view.at)} · ${view.viewer || gettext("not signed in")}${view.ip ? ` · ${view.ip}` : ""}${view.kind === "fork" ? ` · ${gettext("continued it")}` : ""}`),
      );
      clear(details, items.length ? h("ul", { class: "share-view-list" }, items) : h("p", { class: "muted small" }, gettext("Nobody has opened it yet.")));
    } catch (error) {
      clear(details, failure(error));
    }
  }

  async revoke(share, button) {
    button.disabled = true;
    try {
      await api(`${this.base}${share.id}/`, { method: "DELETE" });
      toast(gettext("Link revoked: it opens nothing now."));
      await this.refresh();
    } catch (error) {
      toast(error.message, "bad");
      button.disabled = false;
    }
  }
}

function statusWords(status) {
  if (status === "revoked") return gettext("revoked");
  if (status === "expired") return gettext("expired");
  return gettext("active");
}
