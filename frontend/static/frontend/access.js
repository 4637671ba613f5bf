// The permission matrix: toolsets and tools × groups and users. Each cell's toggle
// (allow / deny / inherit) saves at once through /api/grants/; each user cell
// shows what the user gets and the rule that decided (/api/access/?user=).

import { api } from "./api.js";
import { clear, failure, h, loading, toast } from "./dom.js";

const subjects = JSON.parse(document.getElementById("subjects").textContent);
const box = document.getElementById("matrix");
const filter = document.getElementById("matrix-filter");

const columns = [
  ...subjects.groups.map((group) => ({ kind: "group", key: `group:${group.name}`, name: group.name, members: group.members })),
  ...subjects.users.map((user) => ({ kind: "user", key: `user:${user.username}`, name: user.username, id: user.id, staff: user.is_staff })),
];
const EFFECTS = [
  { effect: "allow", text: "A", label: "allow" },
  { effect: "deny", text: "D", label: "deny" },
  { effect: "inherit", text: "–", label: "inherit" },
];

const FOLD_OVER = 12; // tools; more than this and toolsets start folded
let grants = [];
const decisions = new Map(); // `${userId}|${target}` -> decision
const cells = []; // {column, target, buttons, decision, toggle}

async function load() {
  clear(box, loading("Loading toolsets, grants and access…"));
  try {
    const [toolsets, tools] = await Promise.all([api("/api/toolsets/"), api("/api/tools/")]);
    await Promise.all([loadGrants(), loadDecisions(columns.filter((c) => c.kind === "user"))]);
    render(toolsets, tools);
  } catch (error) {
    clear(box, failure(error, load));
  }
}

async function loadGrants() {
  grants = await api("/api/grants/");
}

async function loadDecisions(users) {
  await Promise.all(
    users.map(async (column) => {
      const matrix = await api("/api/access/", { query: { user: column.id } });
      for (const toolset of matrix.toolsets) {
        decisions.set(`${column.id}|toolset:${toolset.name}`, toolset);
        for (const tool of toolset.tools) decisions.set(`${column.id}|tool:${tool.full_name}`, tool);
      }
    }),
  );
}

function render(toolsets, tools) {
  if (!toolsets.length) {
    clear(box, h("div", { class: "state empty" }, h("strong", {}, "No toolsets yet"), h("p", {}, "Tools appear here once agents with tools are registered (manage.py sync_tools).")));
    return;
  }
  const toolInfo = new Map(tools.map((tool) => [tool.full_name, tool]));
  cells.length = 0;
  const head = h(
    "thead",
    {},
    h(
      "tr",
      {},
      h("th", { class: "target", scope: "col" }, "Toolset / tool"),
      columns.map((column) =>
        h("th", { scope: "col", dataset: { subject: column.key } }, h("span", { class: "subject-kind" }, column.kind), column.name),
      ),
    ),
  );
  const body = h("tbody", {});
  // A big catalog starts folded to its toolsets; the filter still finds every tool.
  const open = tools.length <= FOLD_OVER;
  for (const toolset of toolsets) {
    const toolRows = toolset.tools.map((fullName) => row("tool", fullName, toolInfo.get(fullName), toolset));
    for (const tr of toolRows) tr.classList.toggle("collapsed", !open);
    const expander = h("button", { type: "button", class: "expander", "aria-expanded": String(open), "aria-label": `Show or hide the tools of ${toolset.name}` }, open ? "▾" : "▸");
    expander.addEventListener("click", () => {
      const show = expander.getAttribute("aria-expanded") !== "true";
      expander.setAttribute("aria-expanded", String(show));
      expander.textContent = show ? "▾" : "▸";
      for (const tr of toolRows) tr.classList.toggle("collapsed", !show);
      applyFilter();
    });
    body.append(row("toolset", toolset.name, toolset, toolset, expander), ...toolRows);
  }
  clear(box, h("table", { class: "matrix", id: "access-matrix" }, head, body));
  applyFilter();
}

function row(kind, name, info, toolset, expander = null) {
  const target = `${kind}:${name}`;
  const label =
    kind === "toolset"
      ? [expander, h("span", {}, name), policySelect(toolset), killSwitch("toolset", toolset)]
      : [h("code", {}, name.slice(toolset.name.length + 1) || name), info ? h("span", { class: "badge" }, info.risk) : null, info ? killSwitch("tool", info) : null, info ? approvalSettings(info) : null];
  return h(
    "tr",
    { class: kind === "toolset" ? "toolset-row" : "tool-row", dataset: { target, toolset: toolset.name, name } },
    h("th", { scope: "row", class: "target" }, label),
    columns.map((column) => cell(column, kind, name)),
  );
}

/** A toolset's default policy, when no grant applies: open or granted only. */
function policySelect(toolset) {
  const select = h(
    "select",
    { class: "policy-select", "aria-label": `Default policy of ${toolset.name}`, title: "Default policy when no grant applies" },
    h("option", { value: "open", selected: toolset.default_policy === "open" }, "open"),
    h("option", { value: "granted_only", selected: toolset.default_policy === "granted_only" }, "granted only"),
  );
  select.addEventListener("change", () =>
    saveCatalog(`/api/toolsets/${encodeURIComponent(toolset.name)}/`, { default_policy: select.value }, `${toolset.name}: ${select.value.replace("_", " ")} by default`, () => {
      select.value = toolset.default_policy;
    }).then((saved) => {
      if (saved) toolset.default_policy = select.value;
    }),
  );
  return select;
}

/** The kill switch of a toolset or a tool: off disables it for everyone. */
function killSwitch(kind, item) {
  const name = kind === "tool" ? item.full_name : item.name;
  const button = h("button", { type: "button", class: "switch", role: "switch", "aria-checked": String(item.enabled), "aria-label": `${name} enabled`, title: "Kill switch: off disables it for everyone" }, item.enabled ? "on" : "off");
  button.addEventListener("click", async () => {
    const enabled = button.getAttribute("aria-checked") !== "true";
    const path = kind === "tool" ? `/api/tools/${encodeURIComponent(name)}/` : `/api/toolsets/${encodeURIComponent(name)}/`;
    if (await saveCatalog(path, { enabled }, `${name} ${enabled ? "enabled" : "disabled"} for everyone`)) {
      button.setAttribute("aria-checked", String(enabled));
      button.textContent = enabled ? "on" : "off";
    }
  });
  return button;
}

/** A tool's human approval: whether each call waits, who decides, until when, and
 * whether the requester may approve her own calls ("always allow for me"). A button
 * in the tool's row says how it is set and opens the form in a dialog. */
function approvalSettings(tool) {
  const slug = tool.full_name.replace(/[^\w-]/g, "_");
  const id = (field) => `approval-${slug}-${field}`;
  const opener = h("button", { type: "button", class: "approval-summary", "aria-haspopup": "dialog", title: "Human approval of this tool's calls", dataset: { tool: tool.full_name } });
  const requires = h("input", { type: "checkbox", id: id("requires") });
  const group = h(
    "select",
    { id: id("group") },
    h("option", { value: "" }, "the session's owner"),
    subjects.groups.map((g) => h("option", { value: g.name }, `members of ${g.name}`)),
  );
  const timeout = h("input", { type: "number", id: id("timeout"), min: "1", step: "1", inputmode: "numeric", placeholder: "never" });
  const self = "requester_may_approve" in tool ? h("input", { type: "checkbox", id: id("self") }) : null;
  const save = h("button", { type: "submit", class: "button small primary" }, "Save");
  const cancel = h("button", { type: "button", class: "button small ghost" }, "Cancel");
  const fields = [group, timeout, self].filter(Boolean);
  const show = () => {
    requires.checked = Boolean(tool.requires_approval);
    group.value = tool.approver_group || "";
    timeout.value = tool.approval_timeout ? String(tool.approval_timeout) : "";
    if (self) self.checked = Boolean(tool.requester_may_approve);
    for (const field of fields) field.disabled = !requires.checked;
    opener.textContent = approvalWords(tool);
    opener.dataset.on = String(Boolean(tool.requires_approval));
  };
  requires.addEventListener("change", () => {
    for (const field of fields) field.disabled = !requires.checked;
  });
  const form = h(
    "form",
    { class: "approval-form" },
    h("h2", { class: "panel-title", id: id("title") }, "Approval of ", h("code", {}, tool.full_name)),
    h("label", { class: "check" }, requires, " Every call waits for a person's approval"),
    h("label", { for: id("group") }, "Who decides"),
    group,
    h("label", { for: id("timeout") }, "Rejected when undecided after (seconds; blank: never)"),
    timeout,
    self ? h("label", { class: "check" }, self, " The requester may approve her own calls, and always allow the tool for her session") : null,
    h("div", { class: "answer-buttons" }, save, cancel),
  );
  const dialog = h("dialog", { class: "approval-dialog", "aria-labelledby": id("title"), dataset: { tool: tool.full_name } }, form);
  opener.addEventListener("click", () => {
    show();
    dialog.showModal();
  });
  cancel.addEventListener("click", () => dialog.close());
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      requires_approval: requires.checked,
      approver_group: group.value || null,
      approval_timeout: timeout.value ? Number(timeout.value) : null,
    };
    if (self) body.requester_may_approve = self.checked;
    save.disabled = true;
    const words = body.requires_approval ? "calls wait for approval" : "calls need no approval";
    if (await saveCatalog(`/api/tools/${encodeURIComponent(tool.full_name)}/`, body, `${tool.full_name}: ${words}`)) {
      Object.assign(tool, body);
      dialog.close();
    }
    save.disabled = false;
    show();
  });
  show();
  return [opener, dialog];
}

/** "approval: managers · 5 min", or "no approval". */
function approvalWords(tool) {
  if (!tool.requires_approval) return "no approval";
  const who = tool.approver_group || "owner";
  const until = tool.approval_timeout ? ` · ${tool.approval_timeout} s` : "";
  const self = tool.requester_may_approve ? " · self" : "";
  return `approval: ${who}${until}${self}`;
}

async function saveCatalog(path, body, done, undo = () => {}) {
  try {
    await api(path, { method: "PATCH", body });
  } catch (error) {
    toast(`Not saved: ${error.message}`, "bad");
    undo();
    return false;
  }
  await loadDecisions(columns.filter((c) => c.kind === "user"));
  for (const item of cells) paint(item);
  toast(`Saved: ${done}.`);
  return true;
}

function cell(column, kind, name) {
  const target = `${kind}:${name}`;
  const decision = h("span", { class: "decision" });
  const buttons = EFFECTS.map(({ effect, text, label }) => {
    const button = h("button", { type: "button", class: effect, "aria-pressed": "false", "aria-label": `${label} ${kind} ${name} for ${column.kind} ${column.name}`, title: label, dataset: { effect } }, text);
    button.addEventListener("click", () => change(entry, effect));
    return button;
  });
  const toggle = h("div", { class: "toggle", role: "group", "aria-label": `${kind} ${name} for ${column.name}` }, buttons);
  const entry = { column, kind, name, target, buttons, decision, toggle };
  cells.push(entry);
  paint(entry);
  return h("td", { class: "cell", dataset: { subject: column.key } }, toggle, decision);
}

function grantOf(entry) {
  return grants.find((grant) => {
    const subject = entry.column.kind === "user" ? grant.user === entry.column.name : grant.group === entry.column.name;
    const target = entry.kind === "tool" ? grant.tool === entry.name : grant.toolset === entry.name;
    return subject && target;
  });
}

function paint(entry) {
  const grant = grantOf(entry);
  const current = grant ? grant.effect : "inherit";
  for (const button of entry.buttons) button.setAttribute("aria-pressed", String(button.dataset.effect === current));
  entry.toggle.dataset.effect = current;
  if (entry.column.kind === "group") {
    entry.decision.className = "decision muted";
    entry.decision.textContent = grant ? `${grant.effect} for its ${entry.column.members.length} member${entry.column.members.length === 1 ? "" : "s"}${grant.active ? "" : " (expired)"}` : "no grant";
    return;
  }
  const decision = decisions.get(`${entry.column.id}|${entry.target}`);
  if (!decision) {
    entry.decision.className = "decision muted";
    entry.decision.textContent = "";
    return;
  }
  // Grants stand out; the default policy (the common case) stays quiet.
  const quiet = decision.reason === "policy" ? " by-policy" : "";
  entry.decision.className = `decision ${decision.allowed ? "allowed" : "denied"}${quiet}`;
  entry.decision.textContent = `${decision.allowed ? "✓" : "✗"} ${decision.rule}`;
  entry.decision.title = decision.rule;
}

async function change(entry, effect) {
  const grant = grantOf(entry);
  if ((grant ? grant.effect : "inherit") === effect) return;
  entry.toggle.classList.add("saving");
  try {
    if (effect === "inherit") {
      await api(`/api/grants/${grant.id}/`, { method: "DELETE" });
    } else {
      const subject = entry.column.kind === "user" ? { user: entry.column.name } : { group: entry.column.name };
      const target = entry.kind === "tool" ? { tool: entry.name } : { toolset: entry.name };
      await api("/api/grants/", { method: "POST", body: { ...subject, ...target, effect } });
    }
    const affected = entry.column.kind === "user" ? [entry.column] : columns.filter((c) => c.kind === "user" && entry.column.members.includes(c.id));
    await Promise.all([loadGrants(), loadDecisions(affected)]);
    for (const item of cells) paint(item);
    toast(`Saved: ${effect} ${entry.kind} ${entry.name} for ${entry.column.kind} ${entry.column.name}.`);
  } catch (error) {
    toast(`Not saved: ${error.message}`, "bad");
  } finally {
    entry.toggle.classList.remove("saving");
  }
}

function applyFilter() {
  const query = filter.value.trim().toLowerCase();
  for (const tr of box.querySelectorAll("tbody tr")) {
    const matches = !query || tr.dataset.name.toLowerCase().includes(query) || tr.dataset.toolset.toLowerCase().includes(query);
    tr.classList.toggle("hidden", !matches || (!query && tr.classList.contains("collapsed")));
  }
}

filter.addEventListener("input", applyFilter);
load();
