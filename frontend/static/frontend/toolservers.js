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
import { gettext, ngettext, gettext_noop, interpolate } from "./i18n.js";

const list = document.getElementById("server-list");
const count = document.getElementById("server-count");
const detail = document.getElementById("server-detail");
const groupNames = document.getElementById("group-names");
const REVIEW = { new: [gettext_noop("new — review"), "wait"], changed: [gettext_noop("changed — review"), "bad"], approved: [gettext_noop("approved"), "ok"] };
const KINDS = {
  "mcp-stdio": gettext_noop(gettext_noop("MCP server: a command on this server (stdio)")),
  "mcp-http": gettext_noop(gettext_noop("MCP server: a URL (Streamable HTTP)")),
  "openapi-url": gettext_noop(gettext_noop("OpenAPI spec: a URL")),
  "openapi-file": gettext_noop(gettext_noop("OpenAPI spec: a file")),
  a2a: gettext_noop(gettext_noop("Remote A2A agent: its card's URL")),
};
const KIND_LABELS = { mcp: "MCP", openapi: "OpenAPI", a2a: gettext_noop("A2A agent") };
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
  clear(list, servers.length ? servers.map(serverItem) : h("li", { class: "muted" }, gettext("No servers connected yet.")));
  if (selected === null && !detail.querySelector("#connect-form")) {
    clear(detail, empty(gettext("No server chosen"), gettext("Pick a server, or connect one.")));
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
      badge(KIND_LABELS[server.kind] ? gettext(KIND_LABELS[server.kind]) : server.kind),
      waiting ? badge(interpolate(gettext("%(waiting)s to review"), { waiting }, true), "wait") : null,
      server.last_error ? badge(gettext("failing"), "bad") : null,
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
  clear(detail, loading(gettext("Loading the server…")));
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
  const kind = h("select", { id: "connect-kind", name: "kind" }, Object.entries(KINDS).map(([value, text]) => h("option", { value }, gettext(text))));
  const rows = {
    command: field("command", gettext("Command"), h("input", { id: "connect-command", placeholder: gettext("npx -y @modelcontextprotocol/server-everything"), autocomplete: "off" }), gettext("Run on this server, without a shell; quote arguments with spaces.")),
    env: field("env", gettext("Environment (optional)"), h("textarea", { id: "connect-env", rows: 2, placeholder: "API_KEY=…", autocomplete: "off" }), gettext("One NAME=value a line. Values are sealed and never shown again.")),
    url: field("url", gettext("URL"), h("input", { id: "connect-url", type: "url", placeholder: "https://tools.example.com/mcp", autocomplete: "off" })),
    headers: field("headers", gettext("Headers (optional)"), h("textarea", { id: "connect-headers", rows: 2, placeholder: gettext("Authorization: Bearer …"), autocomplete: "off" }), gettext("One Name: value a line. Values are sealed and never shown again.")),
    oauth: h(
      "fieldset",
      { class: "oauth", id: "row-oauth" },
      h("legend", {}, gettext("OAuth client credentials (optional)")),
      h("p", { class: "muted small" }, gettext("For a server behind OAuth: it names its authorization server, which must be this issuer. The secret is sealed and never shown again.")),
      field("oauth-issuer", gettext("Issuer"), h("input", { id: "connect-oauth-issuer", type: "url", placeholder: "https://auth.example.com", autocomplete: "off" })),
      field("oauth-client", gettext("Client ID"), h("input", { id: "connect-oauth-client", autocomplete: "off" })),
      field("oauth-secret", gettext("Client secret"), h("input", { id: "connect-oauth-secret", type: "password", autocomplete: "new-password" })),
      field("oauth-scope", gettext("Scope"), h("input", { id: "connect-oauth-scope", placeholder: gettext("tools:read tools:call"), autocomplete: "off" })),
      h("p", { class: "field-error small", id: "error-oauth", role: "alert" }),
    ),
    token: field("token", gettext("Token (optional)"), h("input", { id: "connect-token", type: "password", autocomplete: "new-password" }), gettext("The credential the agent's endpoint takes, sealed and never shown again.")),
    token_header: field("token_header", gettext("Token header (optional)"), h("input", { id: "connect-token_header", placeholder: "X-Api-Key", autocomplete: "off" }), gettext("Blank: sent as Authorization: Bearer <token>.")),
    spec_file: field("spec_file", gettext("Spec file"), h("input", { id: "connect-spec_file", type: "file", accept: ".json,.yaml,.yml,application/json" })),
    private: h("label", { class: "check", id: "row-private" }, h("input", { type: "checkbox", id: "connect-private" }), gettext(" The API is on a private network or this host")),
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
    h("h2", { class: "panel-title" }, gettext("Connect a server")),
    h("p", { class: "muted small" }, gettext("Its tools are read now and listed for your review; none is offered to anyone until you approve it.")),
    field("kind", gettext("What"), kind),
    field("name", gettext("Name"), h("input", { id: "connect-name", required: true, maxlength: 63, pattern: "[a-z][a-z0-9_]*", autocomplete: "off" }), gettext("Lowercase letters, digits and _; it prefixes its tools' names.")),
    Object.values(rows),
    h("p", { class: "field-error small", id: "error-non_field_errors", role: "alert" }),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "button primary", id: "connect-submit" }, gettext("Connect")), h("button", { type: "button", class: "button ghost", onclick: () => { selected = null; loadServers(); } }, gettext("Cancel"))),
  );
  return form;
}

/** `NAME=value` (or `Name: value`) lines as an object; throws on a line without one. */
function pairs(text, separator) {
  const result = {};
  for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
    const at = line.indexOf(separator);
    if (at < 1) throw new Error(interpolate(gettext("\"%(line)s\" has no %(separator)s."), { line: line.slice(0, 40), separator: separator.trim() }, true));
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
    if (!file) throw new ApiError(400, { spec_file: [gettext("Choose the spec's file.")] });
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
  submit.textContent = gettext("Connecting…");
  try {
    const server = await api("/api/imports/", { method: "POST", ...bodyOf(form, kind) });
    toast(interpolate(ngettext("%(name)s connected: %(tools)s tool found, held for your review.", "%(name)s connected: %(tools)s tools found, held for your review.", server.tools.length), { name: server.name, tools: server.tools.length }, true), "ok");
    selected = server.id;
    await Promise.all([loadServers(), loadDetail()]);
  } catch (error) {
    if (error instanceof ApiError && error.status === 400 && error.body) showErrors(form, error.body);
    else toast(error.message, "bad");
  } finally {
    submit.disabled = false;
    submit.textContent = gettext("Connect");
  }
}

// One server.

function serverDetail(server, toolset, grants) {
  const path = `/api/imports/${server.id}/`;
  const registration = server.registration || {};
  const secrets = [
    ...(registration.header_names || []).map((n) => interpolate(gettext("header %(n)s"), { n }, true)),
    ...(registration.env_names || []).map((n) => interpolate(gettext("env %(n)s"), { n }, true)),
    ...(registration.oauth ? [interpolate(gettext("OAuth client %(client_id)s of %(issuer)s"), { client_id: registration.oauth.client_id, issuer: registration.oauth.issuer }, true)] : []),
    ...(registration.credential ? [interpolate(gettext("a token, in header %(credential)s"), { credential: registration.credential }, true)] : []),
  ];
  const tools = server.tools.filter((tool) => !tool.missing);
  return [
    h("h2", { class: "panel-title", id: "server-title" }, server.name, badge(KIND_LABELS[server.kind] ? gettext(KIND_LABELS[server.kind]) : server.kind)),
    h("p", { class: "muted small", id: "server-origin" }, server.origin),
    secrets.length ? h("p", { class: "muted small", id: "server-secrets" }, interpolate(gettext("Set (values sealed, never shown): %(secrets)s."), { secrets: secrets.join(", ") }, true)) : null,
    h("p", { class: "muted small" }, server.last_refreshed_at ? interpolate(gettext("Read %(last_refreshed_at)s."), { last_refreshed_at: dateTime(server.last_refreshed_at) }, true) : gettext("Never read.")),
    server.last_error ? h("p", { class: "field-error", id: "server-error" }, interpolate(gettext("Last refresh failed: %(last_error)s"), { last_error: server.last_error }, true)) : null,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "button small", id: "refresh-server", onclick: () => refresh(server) }, gettext("Refresh")),
      h("button", { type: "button", class: "button reject small", id: "remove-server", onclick: () => {
        if (!window.confirm(interpolate(gettext("Remove %(name)s? Its tools stop being offered; their audit and grants stay."), { name: server.name }, true))) return;
        selected = null;
        changesOf.delete(server.id);
        change(() => api(path, { method: "DELETE" }), interpolate(gettext("%(name)s removed."), { name: server.name }, true));
      } }, gettext("Remove server")),
    ),
    changesView(changesOf.get(server.id)),
    server.card ? cardView(server.card) : null,
    toolset ? policyView(toolset, grants) : null,
    h("h3", { class: "label" }, interpolate(gettext("Tools (%(tools)s)"), { tools: tools.length }, true)),
    tools.length ? h("div", { id: "tools" }, tools.map((tool) => toolCard(server, tool, grants))) : h("p", { class: "muted" }, gettext("This server declares no tools.")),
  ];
}

/** A remote agent's card as last read: who it says it is, where, and its skills. */
function cardView(card) {
  return h(
    "section",
    { class: "agent-card", id: "server-card", "aria-labelledby": "card-title" },
    h("h3", { class: "label", id: "card-title" }, interpolate(gettext("Its card: %(name)s"), { name: card.name }, true)),
    h("p", { class: "small" }, card.description || gettext("(no description)")),
    h("p", { class: "muted small" }, interpolate(gettext("Endpoint %(url)s%(version)s."), { url: card.url, version: card.version ? interpolate(gettext(", version %(version)s"), { version: card.version }, true) : "" }, true)),
    h("h4", { class: "label" }, interpolate(gettext("Skills (%(skills)s)"), { skills: card.skills.length }, true)),
    card.skills.length
      ? h("ul", { class: "small", id: "card-skills" }, card.skills.map((skill) => h("li", { dataset: { skill: skill.id || "" } }, h("strong", {}, skill.name || skill.id), skill.description ? ` — ${skill.description}` : "")))
      : h("p", { class: "muted small" }, gettext("It declares no skills.")),
  );
}

async function refresh(server) {
  try {
    const refreshed = await api(`/api/imports/${server.id}/refresh/`, { method: "POST" });
    changesOf.set(server.id, refreshed.changes);
    toast(interpolate(gettext("%(name)s read again."), { name: server.name }, true), "ok");
  } catch (error) {
    toast(error.message, "bad");
  }
  await Promise.all([loadServers(), loadDetail()]);
}

function changesView(changes) {
  if (!changes) return null;
  const { added, removed, changed } = changes;
  if (!added.length && !removed.length && !changed.length) {
    return h("div", { class: "notice", id: "server-changes" }, gettext("Refreshed: nothing changed."));
  }
  const what = (item) => [item.description_changed ? "description" : null, item.parameters_changed ? "arguments" : null].filter(Boolean).join(" and ");
  return h(
    "div",
    { class: "notice", id: "server-changes" },
    h("strong", {}, gettext("What the refresh found")),
    h(
      "ul",
      {},
      added.map((name) => h("li", {}, interpolate(gettext("Added: %(name)s (held for review)"), { name }, true))),
      removed.map((name) => h("li", {}, interpolate(gettext("Removed: %(name)s"), { name }, true))),
      changed.map((item) => h("li", {}, interpolate(gettext("Changed: %(full_name)s, its %(item)s (held for review)"), { full_name: item.full_name, item: what(item) }, true))),
    ),
  );
}

function policyView(toolset, grants) {
  const policy = h(
    "select",
    { id: "server-policy", onchange: () => change(() => api(`/api/toolsets/${encodeURIComponent(toolset.name)}/`, { method: "PATCH", body: { default_policy: policy.value } }), interpolate(gettext("%(name)s: default saved."), { name: toolset.name }, true)) },
    h("option", { value: "open", selected: toolset.default_policy === "open" }, gettext("Everyone, unless denied")),
    h("option", { value: "granted_only", selected: toolset.default_policy === "granted_only" }, gettext("Only those granted")),
  );
  const mine = grants.filter((grant) => grant.toolset === toolset.name);
  return h(
    "section",
    { class: "server-policy", "aria-labelledby": "policy-title" },
    h("h3", { class: "label", id: "policy-title" }, gettext("Who may use its approved tools")),
    h("label", { for: "server-policy", class: "visually-hidden" }, gettext("Default")),
    policy,
    grantList(mine, "toolset-grants"),
    grantForm({ toolset: toolset.name }, "toolset", false),
  );
}

function grantList(grants, id) {
  if (!grants.length) return h("p", { class: "muted small", id }, gettext("No grants."));
  return h(
    "ul",
    { class: "grants small", id },
    grants.map((grant) =>
      h(
        "li",
        { dataset: { grant: String(grant.id) } },
        `${grant.effect === "allow" ? gettext("Allowed to") : gettext("Denied to")} ${grant.group ? interpolate(gettext("group %(group)s"), { group: grant.group }, true) : grant.user}`,
        grant.condition_text ? interpolate(gettext(" when %(condition_text)s"), { condition_text: grant.condition_text }, true) : "",
        " ",
        h("button", { type: "button", class: "button ghost small", "aria-label": interpolate(gettext("Remove the grant to %(user)s"), { user: grant.group ? interpolate(gettext("group %(group)s"), { group: grant.group }, true) : grant.user }, true), onclick: () => change(() => api(`/api/grants/${grant.id}/`, { method: "DELETE" }), gettext("Grant removed.")) }, gettext("Remove")),
      ),
    ),
  );
}

/** A form allowing a group the target; on a tool, maybe on a condition. */
function grantForm(target, key, withCondition) {
  const id = key.replace(/[^a-z0-9]/gi, "-");
  const group = h("input", { id: `grant-group-${id}`, list: "group-names", placeholder: gettext("Group"), required: true, autocomplete: "off" });
  const condition = withCondition ? h("textarea", { id: `grant-condition-${id}`, rows: 2, placeholder: gettext('{"path": {"prefix": "reports/"}}') }) : null;
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
          error.textContent = gettext("The condition is not JSON.");
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
      toast(interpolate(gettext("Allowed to %(group)s."), { group: body.group }, true), "ok");
    } },
    h("label", { for: `grant-group-${id}`, class: "visually-hidden" }, gettext("Allow a group")),
    group,
    condition ? h("label", { for: `grant-condition-${id}`, class: "visually-hidden" }, gettext("On the condition (JSON, optional)")) : null,
    condition,
    h("button", { type: "submit", class: "button small" }, gettext("Allow group")),
    error,
  );
  return form;
}

function declaration(title, description, parameters) {
  return h(
    "div",
    { class: "declaration" },
    title ? h("h4", { class: "label" }, title) : null,
    h("p", { class: "tool-description" }, description || gettext("(no description)")),
    h("details", {}, h("summary", { class: "small" }, gettext("Arguments")), json(parameters)),
  );
}

function toolCard(server, tool, grants) {
  const [label, tone] = REVIEW[tool.review];
  const approve = (text) =>
    h("button", { type: "button", class: "button primary small approve-tool", onclick: () =>
      change(() => api(`/api/imports/${server.id}/approve/`, { method: "POST", body: { tool: tool.full_name, digest: tool.digest } }), interpolate(gettext("%(name)s approved."), { name: tool.name }, true)) }, text);
  let body;
  if (tool.review === "changed") {
    body = [
      h("div", { class: "side-by-side" }, declaration(gettext("Approved"), tool.approved_description, tool.approved_parameters), declaration(gettext("Now"), tool.description, tool.parameters)),
      approve(gettext("Approve the new description")),
    ];
  } else if (tool.review === "new") {
    body = [declaration(null, tool.description, tool.parameters), approve(gettext("Approve"))];
  } else {
    body = [declaration(null, tool.description, tool.parameters)];
  }
  return h(
    "article",
    { class: "tool-card", dataset: { tool: tool.full_name } },
    h("h4", { class: "tool-name" }, tool.name, " ", badge(gettext(label), tone)),
    body,
    h("h5", { class: "label" }, gettext("Approval of each call")),
    approvalForm(tool),
    h("h5", { class: "label" }, gettext("Who may call it, on which condition")),
    grantList(grants.filter((grant) => grant.tool === tool.full_name), `grants-${tool.name}`),
    grantForm({ tool: tool.full_name }, tool.name, true),
  );
}

function approvalForm(tool) {
  const id = tool.name;
  const requires = h("input", { type: "checkbox", id: `requires-${id}`, checked: tool.requires_approval });
  const group = h("input", { id: `approver-${id}`, list: "group-names", value: tool.approver_group || "", placeholder: gettext("Approver group (blank: the session's owner)"), autocomplete: "off" });
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
      toast(interpolate(gettext("%(name)s: approval saved."), { name: tool.name }, true), "ok");
    } },
    h("label", { class: "check", for: `requires-${id}` }, requires, gettext(" Each call needs a person's approval")),
    h("label", { for: `approver-${id}`, class: "visually-hidden" }, gettext("Approver group")),
    group,
    h("label", { for: `approvals-${id}`, class: "visually-hidden" }, gettext("Approvals needed")),
    needed,
    h("button", { type: "submit", class: "button small" }, gettext("Save")),
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
