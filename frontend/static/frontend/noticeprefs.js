// The inbox's "Tell me by mail or webhook": my notice preferences, per kind of
// request, saved as each box changes (PUT /api/notices/preferences/).

import { api } from "./api.js";
import { clear, failure, h, loading, toast } from "./dom.js";

const KINDS = [
  ["approval", "Approvals I may decide"],
  ["credential", "Credentials my tools ask for"],
  ["call", "Results I may post"],
];
const CHANNELS = [
  ["mail", "Mail"],
  ["webhook", "My webhooks"],
];
const box = document.getElementById("notice-prefs-form");

async function load() {
  clear(box, loading("Loading your preferences…"));
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
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Request"), CHANNELS.map(([, title]) => h("th", { scope: "col" }, title)))),
    h(
      "tbody",
      {},
      KINDS.map(([kind, title]) =>
        h("tr", {}, h("th", { scope: "row" }, title), CHANNELS.map(([channel, label]) => h("td", {}, checkbox(chosen, kind, channel, `${label}: ${title}`)))),
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
    toast("Saved.");
  } catch (error) {
    input.checked = !input.checked;
    toast(error.message || "Not saved.", "bad");
  } finally {
    input.disabled = false;
  }
}

load();
