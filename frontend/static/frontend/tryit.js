// "Try a tool": pick a tool of the catalog, fill a form built from its JSON schema,
// and run it now, outside any turn (POST /api/tools/{name}/invoke/). Governance
// decides as for a model's call: a refusal shows its reason, a run its status,
// attempts, time, and its result or error (docs/permissions.md).

import { api } from "./api.js";
import { clear, dateTime, duration, failure, h, json, loading } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const box = document.getElementById("try-it");

async function load() {
  clear(box, loading(gettext("Loading tools…")));
  let tools;
  try {
    tools = await api("/api/tools/");
  } catch (error) {
    clear(box, failure(error, load));
    return;
  }
  render(tools.filter((tool) => tool.enabled && !tool.missing));
}

function render(tools) {
  const picker = h(
    "select",
    { id: "try-tool", "aria-label": gettext("Tool to try") },
    h("option", { value: "" }, gettext("Choose a tool…")),
    tools.map((tool) => h("option", { value: tool.full_name }, tool.full_name)),
  );
  const fields = h("div", { class: "stack", id: "try-fields" });
  const result = h("div", { id: "try-result", "aria-live": "polite" });
  const run = h("button", { type: "submit", class: "button primary", disabled: true }, gettext("Run"));
  const form = h("form", { id: "try-form", novalidate: true }, fields, run);
  const byName = new Map(tools.map((tool) => [tool.full_name, tool]));
  picker.addEventListener("change", () => {
    const tool = byName.get(picker.value);
    clear(result);
    run.disabled = !tool;
    clear(fields, tool ? describe(tool) : null, tool ? inputsFor(tool.parameters) : null);
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const tool = byName.get(picker.value);
    if (tool) submit(tool, fields, run, result);
  });
  clear(
    box,
    h("h2", { class: "panel-title" }, gettext("Try a tool")),
    h("p", { class: "muted small" }, gettext("Run one tool now, outside any session, with your own access: its grants, policy, approval and audit apply as when a model calls it.")),
    h("label", { class: "filter" }, picker),
    form,
    result,
  );
}

function describe(tool) {
  return tool.description ? h("p", { class: "muted small" }, tool.description.split("\n")[0]) : null;
}

// The form, from the tool's JSON schema.

/** The JSON type of a schema: its own, or the first of `anyOf` that is not null. */
function typeOf(schema) {
  const types = [].concat(schema.type || (schema.anyOf || []).map((option) => option.type));
  const kind = types.map((type) => String(type || "").toLowerCase()).find((type) => type && type !== "null");
  return kind || "string";
}

function inputsFor(parameters) {
  const properties = (parameters && parameters.properties) || {};
  const required = new Set((parameters && parameters.required) || []);
  const names = Object.keys(properties);
  if (!names.length) return h("p", { class: "muted small" }, gettext("This tool takes no arguments."));
  return names.map((name) => field(name, properties[name], required.has(name)));
}

function field(name, schema, required) {
  const kind = typeOf(schema);
  const id = `try-arg-${name}`;
  const data = { arg: name, kind, required: required ? "1" : "" };
  let input;
  if (Array.isArray(schema.enum)) {
    input = h("select", { id, dataset: data }, required ? null : h("option", { value: "" }, ""), schema.enum.map((value) => h("option", { value: String(value) }, String(value))));
  } else if (kind === "boolean") {
    input = h("input", { id, type: "checkbox", dataset: data });
  } else if (kind === "number" || kind === "integer") {
    input = h("input", { id, type: "number", step: kind === "integer" ? "1" : "any", dataset: data, required });
  } else if (kind === "object" || kind === "array") {
    input = h("textarea", { id, rows: 3, placeholder: kind === "array" ? gettext("[ … ] as JSON") : gettext("{ … } as JSON"), dataset: data, required });
  } else {
    input = h("input", { id, type: "text", dataset: data, required });
  }
  const hint = schema.description || (schema.default !== undefined && schema.default !== null ? interpolate(gettext("default: %(default)s"), { default: JSON.stringify(schema.default) }, true) : "");
  return [
    h("label", { for: id }, name, required ? h("span", { class: "muted", title: gettext("required") }, " *") : null, hint ? h("span", { class: "muted small" }, ` — ${hint}`) : null),
    input,
  ];
}

/** The arguments the form holds; a bad JSON field throws, naming it. */
function argsFrom(fields) {
  const args = {};
  for (const input of fields.querySelectorAll("[data-arg]")) {
    const { arg, kind, required } = input.dataset;
    if (kind === "boolean" && input.type === "checkbox") {
      args[arg] = input.checked;
      continue;
    }
    const raw = input.value.trim();
    if (raw === "" && !required) continue;
    if (kind === "number" || kind === "integer") args[arg] = raw === "" ? raw : Number(raw);
    else if (kind === "object" || kind === "array") {
      try {
        args[arg] = JSON.parse(raw);
      } catch {
        throw new Error(interpolate(gettext("%(arg)s: not valid JSON"), { arg }, true));
      }
    } else args[arg] = input.value;
  }
  return args;
}

// Running it.

async function submit(tool, fields, run, result) {
  let args;
  try {
    args = argsFrom(fields);
  } catch (error) {
    clear(result, outcome("error", gettext("not sent"), error.message));
    return;
  }
  run.disabled = true;
  clear(result, loading(interpolate(gettext("Running %(full_name)s…"), { full_name: tool.full_name }, true)));
  try {
    const answer = await api(`/api/tools/${encodeURIComponent(tool.full_name)}/invoke/`, { method: "POST", body: { args } });
    clear(result, answered(answer));
  } catch (error) {
    clear(result, outcome("error", error.status ? interpolate(gettext("refused (%(status)s)"), { status: error.status }, true) : "failed", error.message));
  } finally {
    run.disabled = false;
  }
}

function answered(answer) {
  const card = outcome(answer.success ? "ok" : "error", answer.status, answer.error);
  card.append(
    h(
      "dl",
      { class: "kv" },
      h("dt", {}, gettext("attempts")),
      h("dd", { "data-field": "attempts" }, String(answer.attempts)),
      h("dt", {}, gettext("took")),
      h("dd", { "data-field": "duration" }, duration(answer.duration_ms)),
      h("dt", {}, gettext("started")),
      h("dd", {}, dateTime(answer.started_at)),
      h("dt", {}, gettext("audit")),
      h("dd", {}, h("a", { href: `/staff/audit/?tool=${encodeURIComponent(answer.tool)}` }, `#${answer.audit_id}`)),
    ),
    h("pre", { class: "small", "data-field": "result" }, json(answer.result)),
  );
  return card;
}

function outcome(status, label, message) {
  return h(
    "div",
    { class: "card", dataset: { status }, id: "try-outcome" },
    h("header", {}, h("span", { class: `badge ${status === "ok" ? "ok" : "bad"}`, "data-field": "status" }, label)),
    message ? h("p", { "data-field": "error" }, message) : null,
  );
}

load();
