// Prompts: my prompt library (/api/prompts/): mine to write, change, share with my
// groups and delete; those shared with me to read. The composer's `/` uses them
// (promptpicker.js).

import { api, ApiError } from "./api.js";
import { clear, empty, failure, h, loading, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const form = document.getElementById("prompt-form");
const groupBox = document.getElementById("prompt-groups");
const errors = document.getElementById("prompt-errors");
const list = document.getElementById("prompt-list");
const title = document.getElementById("prompt-form-title");
const cancel = document.getElementById("prompt-cancel");
let editing = null; // the prompt being changed, or null: a new one

async function loadGroups() {
  let groups;
  try {
    groups = await api("/api/prompts/groups/");
  } catch (error) {
    groupBox.append(failure(error, loadGroups));
    return;
  }
  if (!groups.length) {
    groupBox.append(h("p", { class: "muted small" }, gettext("You are in no group: your prompts are yours only.")));
  }
  for (const group of groups) {
    groupBox.append(
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "groups", value: group.name }), group.name),
    );
  }
}

async function loadPrompts() {
  clear(list, loading());
  let prompts;
  try {
    prompts = await api("/api/prompts/");
  } catch (error) {
    clear(list, failure(error, loadPrompts));
    return;
  }
  if (!prompts.length) {
    clear(list, empty(gettext("No prompts yet"), gettext("Write one above, then type / in a message to use it.")));
    return;
  }
  clear(list, h("ul", { class: "prompt-list" }, prompts.map(row)));
}

function row(prompt) {
  const shared = prompt.groups.length
    ? interpolate(gettext("shared with %(groups)s"), { groups: prompt.groups.join(", ") }, true)
    : gettext("only you");
  const whose = prompt.mine ? shared : interpolate(gettext("by %(owner)s"), { owner: prompt.owner }, true);
  const actions = prompt.can_change
    ? [
        h("button", { type: "button", class: "button ghost small", onclick: () => edit(prompt) }, gettext("Edit")),
        h("button", { type: "button", class: "button ghost small danger", onclick: () => remove(prompt) }, gettext("Delete")),
      ]
    : [];
  return h(
    "li",
    { class: "prompt-item", dataset: { command: prompt.command } },
    h(
      "div",
      { class: "prompt-item-head" },
      h("code", { class: "prompt-command" }, `/${prompt.command}`),
      h("strong", {}, prompt.title),
      h("span", { class: "muted small" }, whose),
      h("span", { class: "prompt-item-actions" }, actions),
    ),
    prompt.description ? h("p", { class: "muted small" }, prompt.description) : null,
    h("pre", { class: "prompt-body" }, prompt.body),
    prompt.variables.length
      ? h("p", { class: "muted small" }, interpolate(gettext("Asks for: %(names)s"), { names: prompt.variables.join(", ") }, true))
      : null,
  );
}

function edit(prompt) {
  editing = prompt;
  title.textContent = interpolate(gettext("Change /%(command)s"), { command: prompt.command }, true);
  for (const name of ["command", "title", "description", "body"]) form.elements[name].value = prompt[name];
  for (const box of groupBox.querySelectorAll("input[name=groups]")) box.checked = prompt.groups.includes(box.value);
  cancel.hidden = false;
  clear(errors);
  form.elements.command.focus();
}

function reset() {
  editing = null;
  form.reset();
  title.textContent = gettext("New prompt");
  cancel.hidden = true;
  clear(errors);
}

async function remove(prompt) {
  if (!confirm(interpolate(gettext("Delete the prompt /%(command)s?"), { command: prompt.command }, true))) return;
  try {
    await api(`/api/prompts/${prompt.id}/`, { method: "DELETE" });
  } catch (error) {
    toast(error.message, "bad");
    return;
  }
  if (editing && editing.id === prompt.id) reset();
  toast(interpolate(gettext("Deleted /%(command)s"), { command: prompt.command }, true), "ok");
  loadPrompts();
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData(form);
  const body = {
    command: data.get("command").trim(),
    title: data.get("title"),
    description: data.get("description"),
    body: data.get("body"),
    groups: data.getAll("groups"),
  };
  clear(errors);
  let saved;
  try {
    saved = editing
      ? await api(`/api/prompts/${editing.id}/`, { method: "PUT", body })
      : await api("/api/prompts/", { method: "POST", body });
  } catch (error) {
    showErrors(error);
    return;
  }
  toast(interpolate(gettext("Saved /%(command)s"), { command: saved.command }, true), "ok");
  reset();
  loadPrompts();
});
cancel.addEventListener("click", reset);

function showErrors(error) {
  const fields = error instanceof ApiError && error.body && typeof error.body === "object" ? error.body : null;
  if (!fields || fields.detail) {
    errors.append(h("p", {}, error.message));
    return;
  }
  for (const [field, messages] of Object.entries(fields)) {
    const label = form.elements[field] ? field : "";
    for (const message of [].concat(messages)) {
      errors.append(h("p", {}, label ? `${label}: ${message}` : String(message)));
    }
  }
}

loadGroups();
loadPrompts();
