// Tool servers (staff): connect an MCP server, an OpenAPI spec or a remote A2A agent
// (by its card's URL: its one tool delegates to it), review the tools it declares,
// set who may use each and how, refresh, remove. Everything goes through
// /api/imports/ (connect, refresh, approve, remove), /api/toolsets/ and /api/tools/
// (policy and approval) and /api/grants/ (who, on which condition).
//
// A tool a server adds is held, offered to nobody, until staff approve it; one whose
// description or arguments changed since is held again ("changed — review"), its
// approved and new text side by side.

import { ApiError, api } from "./api.js";
import { badge, clear, dateTime, empty, failure, h, json, loading, toast } from "./dom.js";

const list = document.getElementById("server-list");
const count = document.getElementById("server-count");
const detail = document.getElementById("server-detail");
const groupNames = document.getElementById("group-names");
const REVIEW = { new: ["new — review", "wait"], changed: ["changed — review", "bad"], approved: ["approved", "ok"] };
const KINDS = {
  "mcp-stdio": "MCP server: a command on this server (stdio)",
  "mcp-http": "MCP server: a URL (Streamable HTTP)",
  "openapi-url": "OpenAPI spec: a URL",
  "openapi-file": "OpenAPI spec: a file",
  a2a: "Remote A2A agent: its card's URL",
};
const KIND_LABELS = { mcp: "MCP", openapi: "OpenAPI", a2a: "A2A agent" };
let servers = [];
let selected = null; // the chosen server's id
const changesOf = new Map(); // server id -> what its last refresh found

async function loadServers() {
  try {
    servers = await api("/api/imports/");
  } catch (error) {
    clear(list, failure(error, loadServers));
    return;
  }
  count.textContent = String(servers.length);
  if (selected !== null && !servers.some((server) => server.id === selected)) selected = null;
  clear(list, servers.length ? servers.map(serverItem) : h("li", { class: "muted" }, "No servers connected yet."));
  if (selected === null && !detail.querySelector("#connect-form")) {
    clear(detail, empty("No server chosen", "Pick a server, or connect one."));
  }
}

function toReview(server) {
  return server.tools.filter((tool) => !tool.missing && tool.review !== "approved").length;
}

function serverItem(server) {
  const waiting = toReview(server);
  return h(
    "li",
    {},
    h(
      "button",
      { type: "button", class: "pick", "aria-current": server.id === selected ? "true" : null, dataset: { server: server.name }, onclick: () => select(server.id) },
      h("span", { class: "pick-name" }, server.name),
      badge(KIND_LABELS[server.kind] || server.kind),
      waiting ? badge(`${waiting} to review`, "wait") : null,
      server.last_error ? badge("failing", "bad") : null,
    ),
  );
}

async function select(id) {
  selected = id;
  clear(list, servers.map(serverItem));
  await loadDetail();
}

async function loadDetail() {
  if (selected === null) return;
  clear(detail, loading("Loading the server…"));
  try {
    const server = await api(`/api/imports/${selected}/`);
    const [toolset, grants] = await Promise.all([
      server.toolset ? api(`/api/toolsets/${encodeURIComponent(server.toolset)}/`) : null,
      api("/api/grants/"),
    ]);
    clear(detail, serverDetail(server, toolset, grants));
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
  await Promise.all([loadServers(), loadDetail()]);
  toast(done, "ok"); // after the page shows the change
  return true;
}

// Connecting.

function field(id, label, control, help) {
  return h(
    "div",
    { class: "field", id: `row-${id}` },
    h("label", { for: `connect-${id}` }, label),
    control,
    help ? h("p", { class: "muted small" }, help) : null,
    h("p", { class: "field-error small", id: `error-${id}`, role: "alert" }),
  );
}

function connectForm() {
  const kind = h("select", { id: "connect-kind", name: "kind" }, Object.entries(KINDS).map(([value, text]) => h("option", { value }, text)));
  const rows = {
    command: field("command", "Command", h("input", { id: "connect-command", placeholder: "npx -y @modelcontextprotocol/server-everything", autocomplete: "off" }), "Run on this server, without a shell; quote arguments with spaces."),
    env: field("env", "Environment (optional)", h("textarea", { id: "connect-env", rows: 2, placeholder: "API_KEY=…", autocomplete: "off" }), "One NAME=value a line. Values are sealed and never shown again."),
    url: field("url", "URL", h("input", { id: "connect-url", type: "url", placeholder: "https://tools.example.com/mcp", autocomplete: "off" })),
    headers: field("headers", "Headers (optional)", h("textarea", { id: "connect-headers", rows: 2, placeholder: "Authorization: Bearer …", autocomplete: "off" }), "One Name: value a line. Values are sealed and never shown again."),
    oauth: h(
      "fieldset",
      { class: "oauth", id: "row-oauth" },
      h("legend", {}, "OAuth client credentials (optional)"),
      h("p", { class: "muted small" }, "For a server behind OAuth: it names its authorization server, which must be this issuer. The secret is sealed and never shown again."),
      field("oauth-issuer", "Issuer", h("input", { id: "connect-oauth-issuer", type: "url", placeholder: "https://auth.example.com", autocomplete: "off" })),
      field("oauth-client", "Client ID", h("input", { id: "connect-oauth-client", autocomplete: "off" })),
      field("oauth-secret", "Client secret", h("input", { id: "connect-oauth-secret", type: "password", autocomplete: "new-password" })),
      field("oauth-scope", "Scope", h("input", { id: "connect-oauth-scope", placeholder: "tools:read tools:call", autocomplete: "off" })),
      h("p", { class: "field-error small", id: "error-oauth", role: "alert" }),
    ),
    token: field("token", "Token (optional)", h("input", { id: "connect-token", type: "password", autocomplete: "new-password" }), "The credential the agent's endpoint takes, sealed and never shown again."),
    token_header: field("token_header", "Token header (optional)", h("input", { id: "connect-token_header", placeholder: "X-Api-Key", autocomplete: "off" }), "Blank: sent as Authorization: Bearer <token>."),
    spec_file: field("spec_file", "Spec file", h("input", { id: "connect-spec_file", type: "file", accept: ".json,.yaml,.yml,application/json" })),
    private: h("label", { class: "check", id: "row-private" }, h("input", { type: "checkbox", id: "connect-private" }), " The API is on a private network or this host"),
  };
  const shown = {
    "mcp-stdio": ["command", "env"],
    "mcp-http": ["url", "headers", "oauth"],
    "openapi-url": ["url", "private"],
    "openapi-file": ["spec_file", "private"],
    a2a: ["url", "token", "token_header"],
  };
  const show = () => {
    for (const [key, row] of Object.entries(rows)) row.hidden = !shown[kind.value].includes(key);
  };
  kind.addEventListener("change", show);
  show();
  const form = h(
    "form",
    { id: "connect-form", class: "stacked-form", novalidate: true, onsubmit: (event) => {
      event.preventDefault();
      connect(form, kind.value);
    } },
    h("h2", { class: "panel-title" }, "Connect a server"),
    h("p", { class: "muted small" }, "Its tools are read now and listed for your review; none is offered to anyone until you approve it."),
    field("kind", "What", kind),
    field("name", "Name", h("input", { id: "connect-name", required: true, maxlength: 63, pattern: "[a-z][a-z0-9_]*", autocomplete: "off" }), "Lowercase letters, digits and _; it prefixes its tools' names."),
    Object.values(rows),
    h("p", { class: "field-error small", id: "error-non_field_errors", role: "alert" }),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "button primary", id: "connect-submit" }, "Connect"), h("button", { type: "button", class: "button ghost", onclick: () => { selected = null; loadServers(); } }, "Cancel")),
  );
  return form;
}

/** `NAME=value` (or `Name: value`) lines as an object; throws on a line without one. */
function pairs(text, separator) {
  const result = {};
  for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
    const at = line.indexOf(separator);
    if (at < 1) throw new Error(`"${line.slice(0, 40)}" has no ${separator.trim()}.`);
    result[line.slice(0, at).trim()] = line.slice(at + separator.length).trim();
  }
  return result;
}

// API fields -> the form's fields their errors go under.
const FIELD_OF = { command: "command", command_line: "command", spec: "spec_file", path: "spec_file", allow_private_network: "non_field_errors", tool_filter: "non_field_errors", prefix: "name", timeout: "non_field_errors", cwd: "command" };

function showErrors(form, errors) {
  for (const el of form.querySelectorAll(".field-error")) el.textContent = "";
  for (const [key, messages] of Object.entries(errors)) {
    const target = form.querySelector(`#error-${FIELD_OF[key] || key}`) || form.querySelector("#error-non_field_errors");
    target.textContent = [target.textContent, ...[].concat(messages)].filter(Boolean).join(" ");
  }
}

function bodyOf(form, kind) {
  const value = (id) => form.querySelector(`#connect-${id}`).value.trim();
  const name = value("name");
  const allow = form.querySelector("#connect-private").checked;
  if (kind === "openapi-file") {
    const file = form.querySelector("#connect-spec_file").files[0];
    if (!file) throw new ApiError(400, { spec_file: ["Choose the spec's file."] });
    const data = new FormData();
    data.append("kind", "openapi");
    data.append("name", name);
    data.append("spec_file", file);
    data.append("allow_private_network", allow ? "true" : "false");
    return { form: data };
  }
  if (kind === "a2a") {
    const body = { kind: "a2a", name, url: value("url") };
    if (value("token")) body.token = value("token");
    if (value("token_header")) body.token_header = value("token_header");
    return { body };
  }
  if (kind === "openapi-url") return { body: { kind: "openapi", name, url: value("url"), allow_private_network: allow } };
  const local = {};
  let env = {};
  let headers = {};
  try {
    env = kind === "mcp-stdio" ? pairs(value("env"), "=") : {};
  } catch (error) {
    local.env = [error.message];
  }
  try {
    headers = kind === "mcp-http" ? pairs(value("headers"), ":") : {};
  } catch (error) {
    local.headers = [error.message];
  }
  if (Object.keys(local).length) throw new ApiError(400, local);
  if (kind === "mcp-stdio") return { body: { kind: "mcp", name, command_line: value("command"), env } };
  const body = { kind: "mcp", name, url: value("url"), headers };
  const issuer = value("oauth-issuer");
  if (issuer || value("oauth-client") || value("oauth-secret")) {
    body.oauth = { issuer, client_id: value("oauth-client"), client_secret: value("oauth-secret"), scope: value("oauth-scope") };
  }
  return { body };
}

async function connect(form, kind) {
  const submit = form.querySelector("#connect-submit");
  submit.disabled = true;
  submit.textContent = "Connecting…";
  try {
    const server = await api("/api/imports/", { method: "POST", ...bodyOf(form, kind) });
    toast(`${server.name} connected: ${server.tools.length} tool(s) found, held for your review.`, "ok");
    selected = server.id;
    await Promise.all([loadServers(), loadDetail()]);
  } catch (error) {
    if (error instanceof ApiError && error.status === 400 && error.body) showErrors(form, error.body);
    else toast(error.message, "bad");
  } finally {
    submit.disabled = false;
    submit.textContent = "Connect";
  }
}

// One server.

function serverDetail(server, toolset, grants) {
  const path = `/api/imports/${server.id}/`;
  const registration = server.registration || {};
  const secrets = [
    ...(registration.header_names || []).map((n) => `header ${n}`),
    ...(registration.env_names || []).map((n) => `env ${n}`),
    ...(registration.oauth ? [`OAuth client ${registration.oauth.client_id} of ${registration.oauth.issuer}`] : []),
    ...(registration.credential ? [`a token, in header ${registration.credential}`] : []),
  ];
  const tools = server.tools.filter((tool) => !tool.missing);
  return [
    h("h2", { class: "panel-title", id: "server-title" }, server.name, badge(KIND_LABELS[server.kind] || server.kind)),
    h("p", { class: "muted small", id: "server-origin" }, server.origin),
    secrets.length ? h("p", { class: "muted small", id: "server-secrets" }, `Set (values sealed, never shown): ${secrets.join(", ")}.`) : null,
    h("p", { class: "muted small" }, server.last_refreshed_at ? `Read ${dateTime(server.last_refreshed_at)}.` : "Never read."),
    server.last_error ? h("p", { class: "field-error", id: "server-error" }, `Last refresh failed: ${server.last_error}`) : null,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "button small", id: "refresh-server", onclick: () => refresh(server) }, "Refresh"),
      h("button", { type: "button", class: "button reject small", id: "remove-server", onclick: () => {
        if (!window.confirm(`Remove ${server.name}? Its tools stop being offered; their audit and grants stay.`)) return;
        selected = null;
        changesOf.delete(server.id);
        change(() => api(path, { method: "DELETE" }), `${server.name} removed.`);
      } }, "Remove server"),
    ),
    changesView(changesOf.get(server.id)),
    server.card ? cardView(server.card) : null,
    toolset ? policyView(toolset, grants) : null,
    h("h3", { class: "label" }, `Tools (${tools.length})`),
    tools.length ? h("div", { id: "tools" }, tools.map((tool) => toolCard(server, tool, grants))) : h("p", { class: "muted" }, "This server declares no tools."),
  ];
}

/** A remote agent's card as last read: who it says it is, where, and its skills. */
function cardView(card) {
  return h(
    "section",
    { class: "agent-card", id: "server-card", "aria-labelledby": "card-title" },
    h("h3", { class: "label", id: "card-title" }, `Its card: ${card.name}`),
    h("p", { class: "small" }, card.description || "(no description)"),
    h("p", { class: "muted small" }, `Endpoint ${card.url}${card.version ? `, version ${card.version}` : ""}.`),
    h("h4", { class: "label" }, `Skills (${card.skills.length})`),
    card.skills.length
      ? h("ul", { class: "small", id: "card-skills" }, card.skills.map((skill) => h("li", { dataset: { skill: skill.id || "" } }, h("strong", {}, skill.name || skill.id), skill.description ? ` — ${skill.description}` : "")))
      : h("p", { class: "muted small" }, "It declares no skills."),
  );
}

async function refresh(server) {
  try {
    const refreshed = await api(`/api/imports/${server.id}/refresh/`, { method: "POST" });
    changesOf.set(server.id, refreshed.changes);
    toast(`${server.name} read again.`, "ok");
  } catch (error) {
    toast(error.message, "bad");
  }
  await Promise.all([loadServers(), loadDetail()]);
}

function changesView(changes) {
  if (!changes) return null;
  const { added, removed, changed } = changes;
  if (!added.length && !removed.length && !changed.length) {
    return h("div", { class: "notice", id: "server-changes" }, "Refreshed: nothing changed.");
  }
  const what = (item) => [item.description_changed ? "description" : null, item.parameters_changed ? "arguments" : null].filter(Boolean).join(" and ");
  return h(
    "div",
    { class: "notice", id: "server-changes" },
    h("strong", {}, "What the refresh found"),
    h(
      "ul",
      {},
      added.map((name) => h("li", {}, `Added: ${name} (held for review)`)),
      removed.map((name) => h("li", {}, `Removed: ${name}`)),
      changed.map((item) => h("li", {}, `Changed: ${item.full_name}, its ${what(item)} (held for review)`)),
    ),
  );
}

function policyView(toolset, grants) {
  const policy = h(
    "select",
    { id: "server-policy", onchange: () => change(() => api(`/api/toolsets/${encodeURIComponent(toolset.name)}/`, { method: "PATCH", body: { default_policy: policy.value } }), `${toolset.name}: default saved.`) },
    h("option", { value: "open", selected: toolset.default_policy === "open" }, "Everyone, unless denied"),
    h("option", { value: "granted_only", selected: toolset.default_policy === "granted_only" }, "Only those granted"),
  );
  const mine = grants.filter((grant) => grant.toolset === toolset.name);
  return h(
    "section",
    { class: "server-policy", "aria-labelledby": "policy-title" },
    h("h3", { class: "label", id: "policy-title" }, "Who may use its approved tools"),
    h("label", { for: "server-policy", class: "visually-hidden" }, "Default"),
    policy,
    grantList(mine, "toolset-grants"),
    grantForm({ toolset: toolset.name }, "toolset", false),
  );
}

function grantList(grants, id) {
  if (!grants.length) return h("p", { class: "muted small", id }, "No grants.");
  return h(
    "ul",
    { class: "grants small", id },
    grants.map((grant) =>
      h(
        "li",
        { dataset: { grant: String(grant.id) } },
        `${grant.effect === "allow" ? "Allowed to" : "Denied to"} ${grant.group ? `group ${grant.group}` : grant.user}`,
        grant.condition_text ? ` when ${grant.condition_text}` : "",
        " ",
        h("button", { type: "button", class: "button ghost small", "aria-label": `Remove the grant to ${grant.group ? `group ${grant.group}` : grant.user}`, onclick: () => change(() => api(`/api/grants/${grant.id}/`, { method: "DELETE" }), "Grant removed.") }, "Remove"),
      ),
    ),
  );
}

/** A form allowing a group the target; on a tool, maybe on a condition. */
function grantForm(target, key, withCondition) {
  const id = key.replace(/[^a-z0-9]/gi, "-");
  const group = h("input", { id: `grant-group-${id}`, list: "group-names", placeholder: "Group", required: true, autocomplete: "off" });
  const condition = withCondition ? h("textarea", { id: `grant-condition-${id}`, rows: 2, placeholder: '{"path": {"prefix": "reports/"}}' }) : null;
  const error = h("p", { class: "field-error small", id: `grant-error-${id}`, role: "alert" });
  const form = h(
    "form",
    { class: "inline-form grant-form", onsubmit: async (event) => {
      event.preventDefault();
      error.textContent = "";
      const body = { ...target, group: group.value.trim(), effect: "allow" };
      if (condition && condition.value.trim()) {
        try {
          body.condition = JSON.parse(condition.value);
        } catch {
          error.textContent = "The condition is not JSON.";
          return;
        }
      }
      try {
        await api("/api/grants/", { method: "POST", body });
      } catch (failed) {
        error.textContent = failed.message;
        return;
      }
      await Promise.all([loadServers(), loadDetail()]);
      toast(`Allowed to ${body.group}.`, "ok");
    } },
    h("label", { for: `grant-group-${id}`, class: "visually-hidden" }, "Allow a group"),
    group,
    condition ? h("label", { for: `grant-condition-${id}`, class: "visually-hidden" }, "On the condition (JSON, optional)") : null,
    condition,
    h("button", { type: "submit", class: "button small" }, "Allow group"),
    error,
  );
  return form;
}

function declaration(title, description, parameters) {
  return h(
    "div",
    { class: "declaration" },
    title ? h("h4", { class: "label" }, title) : null,
    h("p", { class: "tool-description" }, description || "(no description)"),
    h("details", {}, h("summary", { class: "small" }, "Arguments"), json(parameters)),
  );
}

function toolCard(server, tool, grants) {
  const [label, tone] = REVIEW[tool.review];
  const approve = (text) =>
    h("button", { type: "button", class: "button primary small approve-tool", onclick: () =>
      change(() => api(`/api/imports/${server.id}/approve/`, { method: "POST", body: { tool: tool.full_name, digest: tool.digest } }), `${tool.name} approved.`) }, text);
  let body;
  if (tool.review === "changed") {
    body = [
      h("div", { class: "side-by-side" }, declaration("Approved", tool.approved_description, tool.approved_parameters), declaration("Now", tool.description, tool.parameters)),
      approve("Approve the new description"),
    ];
  } else if (tool.review === "new") {
    body = [declaration(null, tool.description, tool.parameters), approve("Approve")];
  } else {
    body = [declaration(null, tool.description, tool.parameters)];
  }
  return h(
    "article",
    { class: "tool-card", dataset: { tool: tool.full_name } },
    h("h4", { class: "tool-name" }, tool.name, " ", badge(label, tone)),
    body,
    h("h5", { class: "label" }, "Approval of each call"),
    approvalForm(tool),
    h("h5", { class: "label" }, "Who may call it, on which condition"),
    grantList(grants.filter((grant) => grant.tool === tool.full_name), `grants-${tool.name}`),
    grantForm({ tool: tool.full_name }, tool.name, true),
  );
}

function approvalForm(tool) {
  const id = tool.name;
  const requires = h("input", { type: "checkbox", id: `requires-${id}`, checked: tool.requires_approval });
  const group = h("input", { id: `approver-${id}`, list: "group-names", value: tool.approver_group || "", placeholder: "Approver group (blank: the session's owner)", autocomplete: "off" });
  const needed = h("input", { id: `approvals-${id}`, type: "number", min: 1, max: 10, value: tool.approvals_required });
  const error = h("p", { class: "field-error small", id: `approval-error-${id}`, role: "alert" });
  return h(
    "form",
    { class: "inline-form approval-form", onsubmit: async (event) => {
      event.preventDefault();
      error.textContent = "";
      const body = { requires_approval: requires.checked, approver_group: group.value.trim() || null, approvals_required: Number(needed.value) };
      try {
        await api(`/api/tools/${encodeURIComponent(tool.full_name)}/`, { method: "PATCH", body });
      } catch (failed) {
        error.textContent = failed.message;
        return;
      }
      await loadDetail();
      toast(`${tool.name}: approval saved.`, "ok");
    } },
    h("label", { class: "check", for: `requires-${id}` }, requires, " Each call needs a person's approval"),
    h("label", { for: `approver-${id}`, class: "visually-hidden" }, "Approver group"),
    group,
    h("label", { for: `approvals-${id}`, class: "visually-hidden" }, "Approvals needed"),
    needed,
    h("button", { type: "submit", class: "button small" }, "Save"),
    error,
  );
}

async function loadGroups() {
  try {
    const groups = await api("/api/groups/");
    clear(groupNames, groups.map((group) => h("option", { value: group.name })));
  } catch {
    // Suggestions only: the forms still take any group's name.
  }
}

document.getElementById("connect-open").addEventListener("click", () => {
  selected = null;
  clear(list, servers.map(serverItem));
  clear(detail, connectForm());
  document.getElementById("connect-name").focus();
});

loadServers();
loadGroups();
