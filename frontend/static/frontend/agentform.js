// The agent builder's form (staff): every field of a row agent, the instruction with
// a rendered preview, and each refusal shown next to its field. An agent defined in
// code shows only what may change here (who may use it, tool choice, retention).

import { api, ApiError } from "./api.js";
import { clear, h, toast } from "./dom.js";
import { gettext, gettext_noop, interpolate } from "./i18n.js";
import { liveMarkdown } from "./markdown.js";

const TOOL_CHOICES = [
  ["", gettext_noop("Default (TOOLCRIB_FORCED_FIRST_TOOL, else auto)")],
  ["auto", gettext_noop("auto: the model decides")],
  ["none", gettext_noop("none: no tool on the first call")],
  ["required", gettext_noop("required: some tool on the first call")],
  ["function", gettext_noop("one tool, named below")],
];

// A labelled control; a group of checkboxes (or of controls) is a fieldset instead.
function field(name, label, control, hint = "", group = false) {
  return h(
    group ? "fieldset" : "div",
    { class: "builder-field", dataset: { field: name } },
    group ? h("legend", {}, label) : h("label", { for: `agent-${name}` }, label),
    control,
    hint ? h("p", { class: "muted small" }, hint) : null,
    h("p", { class: "field-error small", id: `agent-${name}-error`, role: "alert" }),
  );
}

function checkList(name, options, chosen) {
  const picked = new Set(chosen || []);
  if (!options.length) return h("p", { class: "muted small", id: `agent-${name}` }, gettext("None to pick from."));
  return h(
    "div",
    { class: "check-list", id: `agent-${name}`, role: "group" },
    options.map((option) =>
      h("label", { class: "check" }, h("input", { type: "checkbox", name, value: option, checked: picked.has(option) }), " ", option),
    ),
  );
}

function checked(form, name) {
  return [...form.querySelectorAll(`input[name="${name}"]:checked`)].map((box) => box.value);
}

function toolChoiceValue(choice) {
  if (choice === null || choice === undefined) return ["", ""];
  if (typeof choice === "string") return [choice, ""];
  return ["function", choice.required_function_name || ""];
}

function numberOrNull(text) {
  const value = text.trim();
  return value === "" ? null : Number(value);
}

/**
 * Open the builder for `agent` (null: a new one) in `box`.
 * @param {HTMLElement} box Where the form goes.
 * @param {object|null} agent The agent as GET /api/agents/{name}/ (or its draft) gives it.
 * @param {object} options As GET /api/agents/options/ gives them.
 * @param {{saved: Function, cancel: Function, asDraft?: boolean}} done
 */
export function openBuilder(box, agent, options, done) {
  const code = agent && agent.source === "code";
  const editable = new Set(agent ? agent.editable : ["name"]);
  const a = agent || { kind: "llm", toolsets: [], tools: [], sub_agents: [], starters: [], groups: [], history: 50 };
  const [mode, fn] = toolChoiceValue(a.tool_choice);
  const instruction = h("textarea", { id: "agent-instruction", name: "instruction", rows: "8" });
  instruction.value = a.instruction || "";
  const preview = h("div", { class: "instruction-preview", id: "agent-instruction-preview", role: "region", "aria-label": gettext("Instruction preview"), tabindex: "0" });
  const modelList = h("datalist", { id: "agent-models" }, options.models.map((m) => h("option", { value: m })));
  const toolsetNames = Object.keys(options.toolsets);
  const singles = new Set((a.tools || []).map((t) => `${t.toolset}.${t.tool}`));
  const toolBoxes = toolsetNames
    .filter((name) => options.toolsets[name] && options.toolsets[name].length > 1)
    .map((name) =>
      h(
        "fieldset",
        { class: "tool-pick", dataset: { toolset: name } },
        h("legend", { class: "small" }, name),
        options.toolsets[name].map((tool) =>
          h("label", { class: "check" }, h("input", { type: "checkbox", name: "tools", value: `${name}.${tool}`, checked: singles.has(`${name}.${tool}`) }), " ", tool),
        ),
      ),
    );
  const others = options.agents.filter((name) => !agent || name !== (agent.draft_of || agent.name));
  const formError = h("p", { class: "form-error", id: "agent-form-error", role: "alert" });
  const rows = [
    agent ? null : field("name", gettext("Name"), h("input", { id: "agent-name", name: "name", required: true, maxlength: "92", autocomplete: "off" }), gettext("Letters, digits, '_' and '-'; kept for good (sessions use it).")),
    field("description", gettext("Description"), h("input", { id: "agent-description", name: "description", value: a.description || "" })),
    field("kind", gettext("Kind"), h("select", { id: "agent-kind", name: "kind" }, [["llm", gettext("LLM agent")], ["sequential", gettext("Sequential")], ["loop", gettext("Loop")]].map(([v, t]) => h("option", { value: v, selected: a.kind === v }, t)))),
    field("instruction", gettext("Instruction (Markdown)"), h("div", { class: "instruction-edit" }, instruction, h("div", {}, h("div", { class: "label small" }, gettext("Preview")), preview))),
    field("model", gettext("Model"), h("input", { id: "agent-model", name: "model", list: "agent-models", value: a.model || "", placeholder: gettext("blank: the default model"), autocomplete: "off" }), gettext("Any model a provider serves, as the provider names it.")),
    field("model_choices", gettext("Models users may pick (one a line)"), h("textarea", { id: "agent-model_choices", name: "model_choices", rows: "2", placeholder: gettext("blank: no picker") }, (a.model_choices || []).join("\n")), gettext("Besides its own model: a session offers a picker of those granted to its user.")),
    field("toolsets", gettext("Whole toolsets"), checkList("toolsets", toolsetNames, a.toolsets), "", true),
    toolBoxes.length ? field("tools", gettext("Single tools (of toolsets not taken whole)"), h("div", { id: "agent-tools" }, toolBoxes), "", true) : null,
    field("sub_agents", gettext("Sub-agents"), checkList("sub_agents", others, a.sub_agents), "", true),
    field("max_iterations", gettext("Max iterations (loop agents)"), h("input", { id: "agent-max_iterations", name: "max_iterations", type: "number", min: "1", value: a.max_iterations ?? "" })),
    field("starters", gettext("Conversation starters (one a line)"), h("textarea", { id: "agent-starters", name: "starters", rows: "3" }, (a.starters || []).join("\n"))),
    field(
      "tool_choice",
      gettext("Tool choice (first model call of a turn)"),
      h(
        "div",
        { class: "inline-controls" },
        h("select", { id: "agent-tool_choice", name: "tool_choice_mode", "aria-label": gettext("Tool choice") }, TOOL_CHOICES.map(([v, t]) => h("option", { value: v, selected: mode === v }, gettext(t)))),
        h("input", { id: "agent-tool_choice_name", name: "tool_choice_name", value: fn, placeholder: gettext("tool name"), "aria-label": gettext("Tool to call first") }),
      ),
      "",
      true,
    ),
    field("history", gettext("History window (events)"), h("input", { id: "agent-history", name: "history", type: "number", min: "1", value: a.history ?? "" }), gettext("Blank: every event.")),
    field("retention_days", gettext("Keep sessions (days)"), h("input", { id: "agent-retention_days", name: "retention_days", type: "number", min: "0", value: a.retention_days ?? "" }), gettext("0: forever; blank: the server's default.")),
    field("groups", gettext("Who may use it (groups)"), checkList("groups", options.groups, a.groups), gettext("None ticked: everyone signed in. Staff may always."), true),
  ].filter((row) => row && (!code || editable.has(row.dataset.field)));
  const buttons = code
    ? [h("button", { type: "submit", class: "button primary", id: "agent-save" }, gettext("Save"))]
    : [
        h("button", { type: "submit", class: "button primary", id: "agent-save", dataset: { as: "publish" } }, done.asDraft ? gettext("Save draft") : gettext("Save and publish")),
        agent && !done.asDraft ? h("button", { type: "submit", class: "button", id: "agent-save-draft", dataset: { as: "draft" } }, gettext("Save as draft")) : null,
      ];
  const form = h(
    "form",
    { class: "builder-form", id: "agent-form", novalidate: true },
    h("h2", {}, agent ? interpolate(done.asDraft ? gettext("Draft of %(name)s") : gettext("Edit %(name)s"), { name: agent.draft_of || agent.name }, true) : gettext("New agent")),
    code ? h("p", { class: "state compact", id: "code-note" }, gettext("Defined in code: its instruction, model, tools and sub-agents change in code. Here you may change who may use it, its tool choice and how long its sessions are kept.")) : null,
    rows,
    modelList,
    formError,
    h("div", { class: "form-actions" }, buttons, h("button", { type: "button", class: "button ghost", onclick: done.cancel }, gettext("Cancel"))),
  );
  clear(box, form);
  if (instruction.isConnected) {
    const live = liveMarkdown(preview, { headingShift: 2 });
    live.update(instruction.value);
    instruction.addEventListener("input", () => live.update(instruction.value));
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const as = event.submitter ? event.submitter.dataset.as : "publish";
    save(form, agent, code, editable, as || "publish", done);
  });
  form.querySelector("input, textarea, select")?.focus();
}

function values(form, code, editable) {
  const get = (name) => form.elements.namedItem(name);
  const body = {};
  const [mode, fn] = [get("tool_choice_mode").value, get("tool_choice_name").value.trim()];
  body.tool_choice = mode === "" ? null : mode === "function" ? { mode: "required", required_function_name: fn } : mode;
  body.retention_days = numberOrNull(get("retention_days").value);
  body.groups = checked(form, "groups");
  if (code) return Object.fromEntries(Object.entries(body).filter(([k]) => editable.has(k)));
  if (get("name")) body.name = get("name").value.trim();
  body.description = get("description").value;
  body.kind = get("kind").value;
  body.instruction = get("instruction").value;
  body.model = get("model").value.trim();
  body.model_choices = get("model_choices").value.split("\n").map((m) => m.trim()).filter(Boolean);
  body.toolsets = checked(form, "toolsets");
  body.tools = checked(form, "tools")
    .filter((t) => !body.toolsets.includes(t.split(".")[0]))
    .map((t) => ({ toolset: t.slice(0, t.indexOf(".")), tool: t.slice(t.indexOf(".") + 1) }));
  body.sub_agents = checked(form, "sub_agents");
  body.max_iterations = numberOrNull(get("max_iterations").value);
  body.starters = get("starters").value.split("\n").map((s) => s.trim()).filter(Boolean);
  body.history = numberOrNull(get("history").value);
  return body;
}

async function save(form, agent, code, editable, as, done) {
  for (const error of form.querySelectorAll(".field-error, .form-error")) error.textContent = "";
  const body = values(form, code, editable);
  const name = agent ? agent.draft_of || agent.name : null;
  const draft = as === "draft" || done.asDraft;
  const path = !agent ? "/api/agents/" : draft ? `/api/agents/${encodeURIComponent(name)}/draft/` : `/api/agents/${encodeURIComponent(name)}/`;
  try {
    const saved = await api(path, { method: agent ? "PATCH" : "POST", body });
    toast(draft ? gettext("Draft saved: try it, then publish.") : gettext("Saved and published."), "ok");
    done.saved(saved, draft);
  } catch (error) {
    showErrors(form, error);
  }
}

function showErrors(form, error) {
  const general = form.querySelector("#agent-form-error");
  if (!(error instanceof ApiError) || !error.body || typeof error.body !== "object" || error.body.detail) {
    general.textContent = error.message;
    return;
  }
  const rest = [];
  for (const [key, value] of Object.entries(error.body)) {
    const slot = form.querySelector(`#agent-${key}-error`);
    const text = [].concat(value).join(" ");
    if (slot) slot.textContent = text;
    else rest.push(key === "non_field_errors" ? text : `${key}: ${text}`);
  }
  general.textContent = rest.join(" ");
  form.querySelector(".field-error:not(:empty)")?.closest(".builder-field")?.scrollIntoView({ block: "center" });
}
