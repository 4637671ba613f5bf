// The inbox's "Tell me by mail or webhook": my notice preferences, per kind of
// request, saved as each box changes (PUT /api/notices/preferences/).

import { api } from "./api.js";
import { clear, failure, h, loading, toast } from "./dom.js";
import { gettext, gettext_noop, interpolate } from "./i18n.js";

const KINDS = [
  ["approval", gettext_noop("Approvals I may decide")],
  ["credential", gettext_noop("Credentials my tools ask for")],
  ["call", gettext_noop("Results I may post")],
];
const CHANNELS = [
  ["mail", gettext_noop("Mail")],
  ["webhook", gettext_noop("My webhooks")],
];
const box = document.getElementById("notice-prefs-form");

async function load() {
  clear(box, loading(gettext("Loading your preferences…")));
  let chosen;
  try {
    chosen = await api("/api/notices/preferences/");
  } catch (error) {
    clear(box, failure(error, load));
    return;
  }
  clear(box, table(chosen));
}

function table(chosen) {
  return h(
    "table",
    { class: "table cards", id: "notice-prefs-table" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, gettext("Request")), CHANNELS.map(([, title]) => h("th", { scope: "col" }, gettext(title))))),
    h(
      "tbody",
      {},
      KINDS.map(([kind, title]) =>
        h("tr", {}, h("th", { scope: "row" }, gettext(title)), CHANNELS.map(([channel, label]) => h("td", {}, checkbox(chosen, kind, channel, interpolate(gettext("%(channel)s: %(request)s"), { channel: gettext(label), request: gettext(title) }, true))))),
      ),
    ),
  );
}

function checkbox(chosen, kind, channel, label) {
  const input = h("input", { type: "checkbox", "aria-label": label, dataset: { kind, channel } });
  input.checked = Boolean(chosen[kind][channel]);
  input.addEventListener("change", () => save(chosen, kind, input));
  return input;
}

async function save(chosen, kind, input) {
  const changed = { ...chosen[kind], [input.dataset.channel]: input.checked };
  input.disabled = true;
  try {
    Object.assign(chosen, await api("/api/notices/preferences/", { method: "PUT", body: { [kind]: changed } }));
    toast(gettext("Saved."));
  } catch (error) {
    input.checked = !input.checked;
    toast(error.message || gettext("Not saved."), "bad");
  } finally {
    input.disabled = false;
  }
}

load();
