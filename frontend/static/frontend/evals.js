// Eval sets (/evals/): the sets you may read (yours and those shared to your groups),
// a set's cases (read; edit as JSON, delete, add), import of ADK's .evalset.json and
// export back. Everything goes through /api/evalsets/.
//
// Hook for the runs of a set: choosing a set dispatches `evalset:selected` on
// document (detail: the set, as /api/evalsets/{id}/ answers it); #eval-runs is the
// runs' container, hidden until a module fills it.

import { api } from "./api.js";
import { badge, clear, empty, failure, h, loading, toast } from "./dom.js";
import { gettext, interpolate, ngettext } from "./i18n.js";

const list = document.getElementById("set-list");
const count = document.getElementById("set-count");
const detail = document.getElementById("set-detail");
const importErrors = document.getElementById("import-errors");
let sets = [];
let shareable = [];
let selected = Number(new URLSearchParams(location.search).get("set")) || null;

const CASE_TEMPLATE = {
  eval_id: "",
  conversation: [
    {
      user_content: { role: "user", parts: [{ text: "" }] },
      intermediate_data: { tool_uses: [], tool_responses: [] },
      final_response: { role: "model", parts: [{ text: "" }] },
    },
  ],
  session_input: { state: {} },
  expectations: [],
};

async function loadSets() {
  try {
    sets = await api("/api/evalsets/");
  } catch (error) {
    clear(list, failure(error, loadSets));
    return;
  }
  count.textContent = String(sets.length);
  if (selected !== null && !sets.some((set) => set.id === selected)) selected = null;
  clear(list, sets.length ? sets.map(setItem) : h("li", { class: "muted" }, gettext("No eval sets yet.")));
  if (selected === null) clear(detail, empty(gettext("No set chosen"), gettext("Pick a set to see its cases.")));
}

function setItem(set) {
  return h(
    "li",
    {},
    h(
      "button",
      { type: "button", class: "pick", "aria-current": set.id === selected ? "true" : null, dataset: { set: set.name }, onclick: () => select(set.id) },
      h("span", { class: "pick-name" }, set.name),
      set.may_edit ? null : badge(gettext("shared"), "live"),
      h("span", { class: "count", title: gettext("Cases") }, String(set.case_count)),
    ),
  );
}

async function select(id) {
  selected = id;
  history.replaceState(null, "", `?set=${id}`);
  clear(list, sets.map(setItem));
  await loadDetail();
}

async function loadDetail() {
  if (selected === null) return;
  clear(detail, loading(gettext("Loading the set…")));
  try {
    const [set, cases] = await Promise.all([api(`/api/evalsets/${selected}/`), api(`/api/evalsets/${selected}/cases/`)]);
    clear(detail, setDetail(set, cases));
    document.dispatchEvent(new CustomEvent("evalset:selected", { detail: set }));
  } catch (error) {
    clear(detail, failure(error, loadDetail));
  }
}

/** Run a change, say how it went, and show everything afresh. */
async function change(action, done) {
  try {
    await action();
  } catch (error) {
    toast(error.message, "bad");
    return false;
  }
  toast(done, "ok");
  await Promise.all([loadSets(), loadDetail()]);
  return true;
}

function parsed(text, what) {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(interpolate(gettext("%(what)s is not valid JSON."), { what }, true));
  }
}

function setDetail(set, cases) {
  const path = `/api/evalsets/${set.id}/`;
  const groups = set.groups.map((group) => group.name).join(", ") || gettext("nobody");
  return [
    h("h2", { class: "panel-title", id: "set-title" }, set.name),
    h("p", { class: "muted small" }, interpolate(gettext("Owner: %(owner)s · shared to: %(groups)s"), { owner: set.owner.username, groups }, true)),
    set.description ? h("p", { class: "evals-text" }, set.description) : null,
    h("h3", {}, gettext("Criteria")),
    h("pre", { class: "evals-json", id: "set-criteria" }, JSON.stringify(set.criteria, null, 2)),
    h(
      "div",
      { class: "evals-actions" },
      h("a", { class: "button small", href: `${path}export/`, download: "" }, gettext("Export .evalset.json")),
      h("a", { class: "button small", href: `${path}export/test-config/`, download: "test_config.json" }, gettext("Export test_config.json")),
    ),
    set.may_edit ? setForm(set) : null,
    h("h3", { id: "cases-title" }, interpolate(ngettext("%(n)s case", "%(n)s cases", cases.length), { n: cases.length }, true)),
    h("ol", { class: "evals-cases", id: "case-list", "aria-labelledby": "cases-title" }, cases.map((item) => caseItem(set, item))),
    set.may_edit ? newCase(set) : null,
  ];
}

function setForm(set) {
  const name = h("input", { id: "set-name", value: set.name, maxlength: 200, required: true, autocomplete: "off" });
  const description = h("textarea", { id: "set-description", rows: 2, maxlength: 5000 }, set.description);
  const criteria = h("textarea", { id: "set-criteria-edit", rows: 5, class: "evals-code", spellcheck: "false" }, JSON.stringify(set.criteria, null, 2));
  const mine = new Set(set.groups.map((group) => group.id));
  const groups = shareable.map((group) =>
    h("label", { class: "check" }, h("input", { type: "checkbox", value: String(group.id), checked: mine.has(group.id) || null, dataset: { group: group.name } }), " ", group.name),
  );
  const form = h(
    "form",
    { class: "evals-form", id: "set-form" },
    h("label", { for: "set-name" }, gettext("Name")),
    name,
    h("label", { for: "set-description" }, gettext("Description")),
    description,
    h("label", { for: "set-criteria-edit" }, gettext("Criteria (ADK test_config.json)")),
    criteria,
    shareable.length ? h("fieldset", { class: "evals-groups" }, h("legend", {}, gettext("Shared to (members read and run it)")), groups) : null,
    h(
      "div",
      { class: "evals-actions" },
      h("button", { type: "submit", class: "button primary small" }, gettext("Save")),
      h("button", { type: "button", class: "button danger small", id: "delete-set", onclick: () => deleteSet(set) }, gettext("Delete set")),
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const checked = [...form.querySelectorAll(".evals-groups input:checked")].map((box) => Number(box.value));
    change(
      () =>
        api(`/api/evalsets/${set.id}/`, {
          method: "PATCH",
          body: { name: name.value, description: description.value, criteria: parsed(criteria.value, gettext("Criteria")), groups: checked },
        }),
      gettext("Set saved."),
    );
  });
  return h("details", { class: "evals-edit" }, h("summary", {}, gettext("Edit the set")), form);
}

function deleteSet(set) {
  if (!confirm(interpolate(gettext("Delete the set %(name)s, its cases and its runs?"), { name: set.name }, true))) return;
  change(async () => {
    await api(`/api/evalsets/${set.id}/`, { method: "DELETE" });
    selected = null;
    history.replaceState(null, "", location.pathname);
  }, gettext("Set deleted."));
}

function firstText(content) {
  const parts = (content && content.parts) || [];
  return parts.map((part) => part.text || "").join(" ").trim();
}

function caseItem(set, item) {
  const calls = item.conversation.reduce((n, inv) => n + ((inv.intermediate_data && inv.intermediate_data.tool_uses) || []).length, 0);
  const summary = interpolate(
    ngettext("%(turns)s turn", "%(turns)s turns", item.conversation.length) + " · " + ngettext("%(calls)s call", "%(calls)s calls", calls),
    { turns: item.conversation.length, calls },
    true,
  );
  const first = firstText(item.conversation[0] && item.conversation[0].user_content);
  return h(
    "li",
    { class: "evals-case", dataset: { evalId: item.eval_id } },
    h("div", { class: "evals-case-head" }, h("code", {}, item.eval_id), h("span", { class: "muted small" }, summary)),
    first ? h("p", { class: "evals-text" }, first) : null,
    item.expectations.length ? h("p", { class: "small" }, gettext("Expects: "), item.expectations.map((e) => `${e.kind} ${e.tool}`.trim()).join(", ")) : null,
    item.source_session ? h("a", { class: "small", href: `/sessions/${item.source_session}/` }, gettext("From a session")) : null,
    caseEditor(set, item),
  );
}

function caseJson(item) {
  const { eval_id, conversation, session_input, expectations } = item;
  return JSON.stringify({ eval_id, conversation, session_input, expectations }, null, 2);
}

function caseEditor(set, item) {
  const text = h("textarea", { class: "evals-code", rows: 14, spellcheck: "false", readonly: set.may_edit ? null : true, "aria-label": gettext("The case, as JSON") }, caseJson(item));
  const path = `/api/evalsets/${set.id}/cases/${item.id}/`;
  const actions = set.may_edit
    ? h(
        "div",
        { class: "evals-actions" },
        h("button", { type: "button", class: "button primary small", onclick: () => change(() => api(path, { method: "PATCH", body: parsed(text.value, gettext("The case")) }), gettext("Case saved.")) }, gettext("Save")),
        h("button", { type: "button", class: "button danger small", onclick: () => confirm(gettext("Delete this case?")) && change(() => api(path, { method: "DELETE" }), gettext("Case deleted.")) }, gettext("Delete")),
      )
    : null;
  return h("details", { class: "evals-edit" }, h("summary", {}, set.may_edit ? gettext("Edit as JSON") : gettext("Show as JSON")), text, actions);
}

function newCase(set) {
  const text = h("textarea", { class: "evals-code", rows: 14, spellcheck: "false", id: "new-case-json", "aria-label": gettext("The new case, as JSON") }, JSON.stringify(CASE_TEMPLATE, null, 2));
  const add = h("button", { type: "button", class: "button primary small", id: "add-case" }, gettext("Add the case"));
  add.addEventListener("click", () => {
    let body;
    try {
      body = parsed(text.value, gettext("The case"));
    } catch (error) {
      toast(error.message, "bad");
      return;
    }
    if (!body.eval_id) delete body.eval_id;
    change(() => api(`/api/evalsets/${set.id}/cases/`, { method: "POST", body }), gettext("Case added."));
  });
  return h("details", { class: "evals-edit" }, h("summary", {}, gettext("Write a case by hand")), text, h("div", { class: "evals-actions" }, add));
}

document.getElementById("new-set").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = document.getElementById("new-set-name");
  try {
    const set = await api("/api/evalsets/", { method: "POST", body: { name: input.value } });
    input.value = "";
    toast(gettext("Set created."), "ok");
    await loadSets();
    await select(set.id);
  } catch (error) {
    toast(error.message, "bad");
  }
});

document.getElementById("import-set").addEventListener("submit", async (event) => {
  event.preventDefault();
  const [evalsetFile] = document.getElementById("import-evalset").files;
  const [configFile] = document.getElementById("import-config").files;
  clear(importErrors);
  try {
    const body = { evalset: parsed(await evalsetFile.text(), evalsetFile.name) };
    if (configFile) body.test_config = parsed(await configFile.text(), configFile.name);
    const set = await api("/api/evalsets/import/", { method: "POST", body });
    event.target.reset();
    toast(interpolate(gettext("Imported %(name)s."), { name: set.name }, true), "ok");
    await loadSets();
    await select(set.id);
  } catch (error) {
    const problems = error.body ? [...[].concat(error.body.evalset || []), ...[].concat(error.body.test_config || [])] : [];
    clear(importErrors, (problems.length ? problems : [error.message]).map((problem) => h("li", {}, problem)));
    toast(gettext("Nothing was imported."), "bad");
  }
});

async function start() {
  try {
    shareable = await api("/api/evalsets/groups/");
  } catch {
    shareable = [];
  }
  await loadSets();
  if (selected !== null) await loadDetail();
}

start();
