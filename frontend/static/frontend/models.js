// Models (staff): model connections and their models' prices, over /api/providers/.
// Environment connections (the server's variables) are shown read-only; a stored
// connection is added, changed, tested and removed here; a key is sent, never shown.

import { api } from "./api.js";
import { badge, clear, empty, failure, h, loading, toast } from "./dom.js";
import { gettext, gettext_noop, interpolate } from "./i18n.js";

const list = document.getElementById("connection-list");
const count = document.getElementById("connection-count");
const detail = document.getElementById("connection-detail");
const KINDS = [
  ["openai_compatible", gettext_noop("OpenAI-compatible (vLLM, llama.cpp, LM Studio, LiteLLM proxy)")],
  ["ollama", "Ollama"],
  ["gemini", "Gemini"],
  ["anthropic", "Anthropic"],
  ["litellm", gettext_noop("Any LiteLLM provider")],
];
const LISTABLE = new Set(["openai_compatible", "ollama", "environment"]);
let connections = [];
let selected = null; // a connection's name, or "" for a new one

async function load() {
  try {
    connections = await api("/api/providers/");
  } catch (error) {
    clear(list, failure(error, load));
    return;
  }
  count.textContent = String(connections.length);
  clear(list, connections.length ? connections.map(item) : h("li", { class: "muted" }, gettext("No connections yet.")));
  if (selected === null) clear(detail, empty(gettext("No connection chosen"), gettext("Pick a connection, or add one.")));
}

function item(connection) {
  return h(
    "li",
    {},
    h(
      "button",
      { type: "button", class: "pick", "aria-current": connection.name === selected ? "true" : null, dataset: { connection: connection.name }, onclick: () => select(connection.name) },
      h("span", { class: "pick-name" }, connection.name),
      connection.read_only ? badge(gettext("read-only"), "muted") : null,
      connection.granted_only ? badge(gettext("granted only"), "muted") : null,
      h("span", { class: "count", title: gettext("Models") }, String(connection.models.length)),
    ),
  );
}

async function select(name) {
  selected = name;
  clear(list, connections.map(item));
  if (name === "") {
    clear(detail, editor(null));
    return;
  }
  clear(detail, loading(gettext("Loading the connection…")));
  try {
    clear(detail, view(await api(`/api/providers/${encodeURIComponent(name)}/`)));
  } catch (error) {
    clear(detail, failure(error, () => select(name)));
  }
}

function field(label, input, hint) {
  const error = h("p", { class: "field-error small", id: `${input.id}-error`, role: "alert" });
  input.setAttribute("aria-describedby", error.id);
  return { row: h("div", { class: "field" }, h("label", { for: input.id }, label), input, hint ? h("p", { class: "muted small" }, hint) : null, error), error };
}

/** The add or edit form; errors from the API are shown next to their field. */
function editor(connection) {
  const name = h("input", { id: "connection-name", name: "name", value: connection ? connection.name : "", maxlength: 50, required: true, autocomplete: "off" });
  const kind = h("select", { id: "connection-kind", name: "kind" }, ...KINDS.map(([value, label]) => h("option", { value, selected: connection && connection.kind === value ? true : null }, gettext(label))));
  const base = h("input", { id: "connection-base-url", name: "base_url", value: connection ? connection.base_url : "", placeholder: "http://localhost:8000/v1", autocomplete: "off" });
  const provider = h("input", { id: "connection-litellm-provider", name: "litellm_provider", value: connection ? connection.litellm_provider : "", placeholder: gettext("groq, mistral, bedrock…"), autocomplete: "off" });
  const grantedOnly = h("input", { id: "connection-granted-only", name: "granted_only", type: "checkbox", checked: connection && connection.granted_only ? true : null });
  const key = h("input", { id: "connection-api-key", name: "api_key", type: "password", autocomplete: "new-password", placeholder: connection && connection.has_key ? gettext("Stored: leave empty to keep it") : "" });
  const fields = {
    name: field(gettext("Name (agents use name/model)"), name),
    kind: field(gettext("Kind"), kind),
    base_url: field(gettext("Base URL"), base, gettext("The server's address: needed for OpenAI-compatible servers and Ollama.")),
    litellm_provider: field(gettext("LiteLLM provider"), provider, gettext("For “Any LiteLLM provider”: its prefix.")),
    api_key: field(gettext("API key"), key, gettext("Write-only: kept encrypted, never shown again.")),
    granted_only: field(gettext("Granted only"), grantedOnly, gettext("Only the users and groups a model grant below allows may use its models. Off: everyone may, unless a grant denies them.")),
  };
  const general = h("p", { class: "field-error", id: "connection-error", role: "alert" });
  const form = h(
    "form",
    { id: "connection-form", class: "stack" },
    h("h2", { class: "panel-title" }, connection ? interpolate(gettext("Edit %(name)s"), { name: connection.name }, true) : gettext("Add a connection")),
    ...Object.values(fields).map((f) => f.row),
    general,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "button primary small" }, connection ? gettext("Save") : gettext("Add")), h("button", { type: "button", class: "button ghost small", onclick: () => (connection ? select(connection.name) : clear(detail, empty(gettext("No connection chosen"), gettext("Pick a connection, or add one.")))) }, gettext("Cancel"))),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    for (const f of Object.values(fields)) f.error.textContent = "";
    general.textContent = "";
    const body = { name: name.value.trim(), kind: kind.value, base_url: base.value.trim(), litellm_provider: provider.value.trim(), granted_only: grantedOnly.checked };
    if (key.value || !connection) body.api_key = key.value;
    try {
      const path = connection ? `/api/providers/${encodeURIComponent(connection.name)}/` : "/api/providers/";
      const saved = await api(path, { method: connection ? "PATCH" : "POST", body });
      toast(connection ? gettext("Connection saved.") : gettext("Connection added."), "ok");
      selected = saved.name;
      await load();
      await select(saved.name);
    } catch (error) {
      showErrors(error, fields, general);
    }
  });
  return form;
}

function showErrors(error, fields, general) {
  const body = error.body && typeof error.body === "object" ? error.body : null;
  if (!body) {
    general.textContent = error.message;
    return;
  }
  for (const [key, value] of Object.entries(body)) {
    const text = [].concat(value).join(" ");
    if (fields[key]) fields[key].error.textContent = text;
    else general.textContent = text;
  }
}

function view(connection) {
  const path = `/api/providers/${encodeURIComponent(connection.name)}/`;
  const result = h("p", { id: "test-result", role: "status", class: "muted" });
  const testModel = h("select", { id: "test-model", "aria-label": gettext("Model to test") }, ...connection.models.map((m) => h("option", { value: m.model }, m.model)));
  const test = async () => {
    result.textContent = gettext("Testing…");
    result.className = "muted";
    try {
      const outcome = await api(`${path}test/`, { method: "POST", body: { model: testModel.value || "" } });
      result.textContent = outcome.message;
      result.className = outcome.ok ? "ok-text" : "field-error";
    } catch (error) {
      result.textContent = error.message;
      result.className = "field-error";
    }
  };
  const remove = async () => {
    if (!window.confirm(interpolate(gettext("Remove the connection %(name)s? Agents using it fail from their next turn."), { name: connection.name }, true))) return;
    try {
      await api(path, { method: "DELETE" });
    } catch (error) {
      toast(error.message, "bad");
      return;
    }
    toast(gettext("Connection removed."), "ok");
    selected = null;
    await load();
  };
  return [
    h("h2", { class: "panel-title", id: "connection-title" }, connection.name, connection.read_only ? badge(gettext("read-only"), "muted") : null),
    connection.read_only
      ? h("p", { class: "muted" }, interpolate(gettext("From the server's environment (%(variables)s): change those variables and restart to change it. Its models and prices can be listed here."), { variables: connection.variables.join(", ") }, true))
      : h("p", { class: "muted" }, interpolate(gettext("%(kind)s%(base_url)s. Key: %(has_key)s. %(granted_only)s"), { kind: kindLabel(connection.kind), base_url: connection.base_url ? interpolate(gettext(" at %(base_url)s"), { base_url: connection.base_url }, true) : "", has_key: connection.has_key ? gettext("stored") : gettext("none"), granted_only: connection.granted_only ? gettext("Granted only: its models need a model grant.") : gettext("Open to everyone unless a model grant denies them.") }, true)),
    h(
      "div",
      { class: "actions" },
      connection.models.length ? testModel : null,
      h("button", { type: "button", id: "test-connection", class: "button small", onclick: test }, gettext("Test")),
      connection.read_only ? null : h("button", { type: "button", id: "edit-connection", class: "button ghost small", onclick: () => clear(detail, editor(connection)) }, gettext("Edit")),
      connection.read_only ? null : h("button", { type: "button", id: "remove-connection", class: "button ghost small danger", onclick: remove }, gettext("Remove")),
    ),
    result,
    modelsTable(connection, path),
  ];
}

function kindLabel(kind) {
  const found = KINDS.find(([value]) => value === kind);
  return found ? gettext(found[1]) : kind;
}

function priceInput(id, value, label) {
  return h("input", { id, type: "number", min: "0", step: "any", value: value ?? "", placeholder: "—", "aria-label": label, class: "price" });
}

function modelsTable(connection, path) {
  const reload = async () => {
    await load();
    await select(connection.name);
  };
  const rows = connection.models.map((model) => {
    const input = priceInput(`price-in-${model.id}`, model.input_price, interpolate(gettext("%(model)s: input price per million tokens"), { model: model.model }, true));
    const output = priceInput(`price-out-${model.id}`, model.output_price, interpolate(gettext("%(model)s: output price per million tokens"), { model: model.model }, true));
    const save = async () => {
      try {
        await api(`${path}models/${model.id}/`, { method: "PATCH", body: { input_price: input.value || null, output_price: output.value || null } });
        toast(interpolate(gettext("Prices of %(model)s saved."), { model: model.model }, true), "ok");
      } catch (error) {
        toast(error.message, "bad");
      }
    };
    const drop = async () => {
      await api(`${path}models/${model.id}/`, { method: "DELETE" }).catch((error) => toast(error.message, "bad"));
      await reload();
    };
    return h(
      "tr",
      { dataset: { model: model.model } },
      h("td", {}, h("code", {}, model.full_name)),
      h("td", {}, input),
      h("td", {}, output),
      h("td", {}, h("button", { type: "button", class: "button small", onclick: save }, gettext("Save")), h("button", { type: "button", class: "button ghost small", onclick: drop, "aria-label": interpolate(gettext("Remove %(model)s"), { model: model.model }, true) }, gettext("Remove"))),
    );
  });
  const typed = h("input", { id: "new-model", name: "model", placeholder: gettext("Model id"), autocomplete: "off" });
  const typedError = h("p", { class: "field-error small", id: "new-model-error", role: "alert" });
  const add = h("form", { id: "add-model", class: "inline-form" }, h("label", { for: "new-model", class: "visually-hidden" }, gettext("Model id")), typed, h("button", { type: "submit", class: "button small" }, gettext("Add model")));
  add.addEventListener("submit", async (event) => {
    event.preventDefault();
    typedError.textContent = "";
    try {
      await api(`${path}models/`, { method: "POST", body: { model: typed.value.trim() } });
      await reload();
    } catch (error) {
      typedError.textContent = error.body && error.body.model ? [].concat(error.body.model).join(" ") : error.message;
    }
  });
  const fetchButton = LISTABLE.has(connection.kind) || connection.name === "openai"
    ? h("button", { type: "button", id: "fetch-models", class: "button small", onclick: async () => {
        try {
          await api(`${path}models/fetch/`, { method: "POST" });
          await reload();
        } catch (error) {
          toast(error.message, "bad");
        }
      } }, gettext("Fetch models"))
    : null;
  return h(
    "section",
    { "aria-labelledby": "models-title" },
    h("h3", { id: "models-title" }, gettext("Models")),
    rows.length
      ? h("div", { class: "table-wrap" }, h("table", { class: "table", id: "models-table" }, h("thead", {}, h("tr", {}, h("th", {}, gettext("Name for agents")), h("th", {}, gettext("Input / 1M tokens")), h("th", {}, gettext("Output / 1M tokens")), h("th", {}, ""))), h("tbody", {}, ...rows)))
      : h("p", { class: "muted" }, gettext("No models listed yet.")),
    h("div", { class: "actions" }, fetchButton, add),
    typedError,
  );
}

document.getElementById("new-connection").addEventListener("click", () => select(""));
load();
