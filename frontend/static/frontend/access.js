// The permission matrix: groups first, then a page of users, × toolsets and tools.
// Each cell's toggle (allow / deny / inherit) saves at once through /api/grants/;
// its editor (…) sets an expiry too. Each user cell shows what the user gets and the
// rule that decided (/api/access/?users=, one call for the page's users). Users come
// a page at a time from /api/users/ (a name search narrows them), groups from
// /api/groups/, and only the grants of the columns shown (/api/grants/?users=&groups=);
// a toolset's tool rows are built when it opens, so a catalog of 500 tools opens
// quickly (bench/matrix.py times the calls).

import { api } from "./api.js";
import { clear, debounce, failure, h, loading, toast } from "./dom.js";
import { gettext, ngettext, gettext_noop, interpolate } from "./i18n.js";

const PAGE = 12; // users a page; bench/matrix.py times a page
const box = document.getElementById("matrix");
const filter = document.getElementById("matrix-filter");
const userSearch = document.getElementById("user-search");
const pager = document.getElementById("matrix-pager");

let groups = []; // /api/groups/
let users = []; // this page's users (/api/users/)
let page = 0;
let more = false; // a next page exists
let columns = [];
let catalog = null; // {toolsets, tools, toolInfo}
const opened = new Set(); // toolsets shown unfolded
const EFFECTS = [
  { effect: "allow", text: "A", label: gettext_noop("allow") },
  { effect: "deny", text: "D", label: gettext_noop("deny") },
  { effect: "inherit", text: "–", label: gettext_noop("inherit") },
];

const FOLD_OVER = 12; // tools; more than this and toolsets start folded
let grants = [];
const decisions = new Map(); // `${userId}|${target}` -> decision
const cells = []; // {column, target, buttons, decision, toggle}

async function load() {
  clear(box, loading(gettext("Loading toolsets, grants and access…")));
  try {
    // The columns (groups first, then a page of users), then their grants and access.
    const shown = loadGroups()
      .then(loadUsers)
      .then(() => Promise.all([loadGrants(), loadDecisions(userColumns())]));
    const [toolsets, tools] = await Promise.all([api("/api/toolsets/"), api("/api/tools/"), shown]);
    catalog = { toolsets, tools, toolInfo: new Map(tools.map((tool) => [tool.full_name, tool])) };
    if (tools.length <= FOLD_OVER) for (const toolset of toolsets) opened.add(toolset.name);
    render();
  } catch (error) {
    clear(box, failure(error, load));
  }
}

/** Another page of users, or a search: the same catalog, new user columns. */
async function showUsers() {
  try {
    await loadUsers();
    await Promise.all([loadGrants(), loadDecisions(userColumns())]);
  } catch (error) {
    toast(interpolate(gettext("Could not load users: %(error)s"), { error: error.message }, true), "bad");
    return;
  }
  if (catalog) render();
}

async function loadGroups() {
  groups = await api("/api/groups/");
}

async function loadUsers() {
  const search = userSearch.value.trim();
  const found = await api("/api/users/", { query: { search, limit: PAGE * (page + 1) + 1 } });
  if (page > 0 && found.length <= PAGE * page) page = Math.max(0, Math.ceil(found.length / PAGE) - 1);
  users = found.slice(PAGE * page, PAGE * (page + 1));
  more = found.length > PAGE * (page + 1);
  columns = [
    ...groups.map((group) => ({ kind: "group", key: `group:${group.name}`, name: group.name, id: group.id, count: group.member_count })),
    ...users.map((user) => ({ kind: "user", key: `user:${user.username}`, name: user.username, id: user.id, staff: user.is_staff, groups: user.groups })),
  ];
  paintPager(search);
}

function userColumns() {
  return columns.filter((c) => c.kind === "user");
}

function paintPager(search) {
  const first = PAGE * page + 1;
  const words = users.length
    ? interpolate(gettext("Users %(first)s–%(last)s%(search)s"), { first, last: first + users.length - 1, search: search ? interpolate(gettext(" matching “%(search)s”"), { search }, true) : "" }, true)
    : search
      ? interpolate(gettext("No user matches “%(search)s”"), { search }, true)
      : gettext("No users");
  const previous = h("button", { type: "button", class: "button small ghost", disabled: page === 0, "aria-label": gettext("Previous users") }, gettext("‹ Previous"));
  const next = h("button", { type: "button", class: "button small ghost", disabled: !more, "aria-label": gettext("Next users") }, gettext("Next ›"));
  previous.addEventListener("click", () => {
    page -= 1;
    showUsers();
  });
  next.addEventListener("click", () => {
    page += 1;
    showUsers();
  });
  clear(pager, previous, h("span", { class: "muted small", id: "matrix-page", "aria-live": "polite" }, words), next);
}

/** The grants of the columns shown: their users' and their groups'. */
async function loadGrants() {
  const ids = (kind) => columns.filter((c) => c.kind === kind).map((c) => c.id).join(",");
  const query = Object.fromEntries(Object.entries({ users: ids("user"), groups: ids("group") }).filter(([, value]) => value));
  grants = Object.keys(query).length ? await api("/api/grants/", { query }) : [];
}

/** What each of these users gets, in one call. */
async function loadDecisions(columnsToLoad) {
  if (!columnsToLoad.length) return;
  const matrices = await api("/api/access/", { query: { users: columnsToLoad.map((c) => c.id).join(",") } });
  for (const matrix of matrices) {
    const id = matrix.user.id;
    for (const toolset of matrix.toolsets) {
      decisions.set(`${id}|toolset:${toolset.name}`, toolset);
      for (const tool of toolset.tools) decisions.set(`${id}|tool:${tool.full_name}`, tool);
    }
  }
}

function render() {
  const { toolsets, toolInfo } = catalog;
  if (!toolsets.length) {
    clear(box, h("div", { class: "state empty" }, h("strong", {}, gettext("No toolsets yet")), h("p", {}, gettext("Tools appear here once agents with tools are registered (manage.py sync_tools)."))));
    return;
  }
  cells.length = 0;
  const head = h(
    "thead",
    {},
    h(
      "tr",
      {},
      h("th", { class: "target", scope: "col" }, gettext("Toolset / tool")),
      columns.map((column) =>
        h("th", { scope: "col", class: column.kind, dataset: { subject: column.key } }, h("span", { class: "subject-kind" }, column.kind), column.name),
      ),
    ),
  );
  const body = h("tbody", {});
  // A big catalog starts folded to its toolsets; a tool row is built when its
  // toolset opens (or the filter finds it).
  for (const toolset of toolsets) {
    const open = opened.has(toolset.name);
    const expander = h("button", { type: "button", class: "expander", "aria-expanded": String(open), "aria-label": interpolate(gettext("Show or hide the tools of %(name)s"), { name: toolset.name }, true) }, open ? "▾" : "▸");
    const toolsetRow = row("toolset", toolset.name, toolset, toolset, expander);
    let toolRows = null;
    toolsetRow.toolRows = () => {
      if (!toolRows) {
        toolRows = toolset.tools.map((fullName) => row("tool", fullName, toolInfo.get(fullName), toolset));
        for (const tr of toolRows) tr.classList.toggle("collapsed", !opened.has(toolset.name));
        toolsetRow.after(...toolRows);
      }
      return toolRows;
    };
    expander.addEventListener("click", () => {
      const show = expander.getAttribute("aria-expanded") !== "true";
      expander.setAttribute("aria-expanded", String(show));
      expander.textContent = show ? "▾" : "▸";
      if (show) opened.add(toolset.name);
      else opened.delete(toolset.name);
      for (const tr of toolsetRow.toolRows()) tr.classList.toggle("collapsed", !show);
      applyFilter();
    });
    body.append(toolsetRow);
    if (open) toolsetRow.toolRows();
  }
  clear(box, h("table", { class: "matrix", id: "access-matrix" }, head, body));
  applyFilter();
}

function row(kind, name, info, toolset, expander = null) {
  const target = `${kind}:${name}`;
  const label =
    kind === "toolset"
      ? [expander, h("span", {}, name), policySelect(toolset), killSwitch("toolset", toolset)]
      : [h("code", {}, name.slice(toolset.name.length + 1) || name), info ? h("span", { class: "badge risk", dataset: { risk: info.risk } }, info.risk) : null, info ? killSwitch("tool", info) : null, ...(info ? toolEditing(info) : [])];
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
    { class: "policy-select", "aria-label": interpolate(gettext("Default policy of %(name)s"), { name: toolset.name }, true), title: gettext("Default policy when no grant applies") },
    h("option", { value: "open", selected: toolset.default_policy === "open" }, gettext("open")),
    h("option", { value: "granted_only", selected: toolset.default_policy === "granted_only" }, gettext("granted only")),
  );
  select.addEventListener("change", () =>
    saveCatalog(`/api/toolsets/${encodeURIComponent(toolset.name)}/`, { default_policy: select.value }, interpolate(gettext("%(name)s: %(value)s by default"), { name: toolset.name, value: select.value.replace("_", " ") }, true), () => {
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
  const button = h("button", { type: "button", class: "switch", role: "switch", "aria-checked": String(item.enabled), "aria-label": interpolate(gettext("%(name)s enabled"), { name }, true), title: gettext("Kill switch: off disables it for everyone") }, item.enabled ? gettext("on") : gettext("off"));
  button.addEventListener("click", async () => {
    const enabled = button.getAttribute("aria-checked") !== "true";
    const path = kind === "tool" ? `/api/tools/${encodeURIComponent(name)}/` : `/api/toolsets/${encodeURIComponent(name)}/`;
    if (await saveCatalog(path, { enabled }, interpolate(enabled ? gettext("%(name)s enabled for everyone") : gettext("%(name)s disabled for everyone"), { name }, true))) {
      button.setAttribute("aria-checked", String(enabled));
      button.textContent = enabled ? gettext("on") : gettext("off");
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
  const opener = h("button", { type: "button", class: "approval-summary", "aria-haspopup": "dialog", title: gettext("Human approval of this tool's calls"), dataset: { tool: tool.full_name } });
  const requires = h("input", { type: "checkbox", id: id("requires") });
  const group = h(
    "select",
    { id: id("group") },
    h("option", { value: "" }, gettext("the session's owner")),
    groups.map((g) => h("option", { value: g.name }, interpolate(gettext("members of %(name)s"), { name: g.name }, true))),
  );
  const timeout = h("input", { type: "number", id: id("timeout"), min: "1", step: "1", inputmode: "numeric", placeholder: gettext("never") });
  const self = "requester_may_approve" in tool ? h("input", { type: "checkbox", id: id("self") }) : null;
  const people = "approvals_required" in tool ? h("input", { type: "number", id: id("people"), min: "1", max: "10", step: "1", inputmode: "numeric" }) : null;
  const save = h("button", { type: "submit", class: "button small primary" }, gettext("Save"));
  const cancel = h("button", { type: "button", class: "button small ghost" }, gettext("Cancel"));
  const fields = [group, timeout, people, self].filter(Boolean);
  const show = () => {
    requires.checked = Boolean(tool.requires_approval);
    group.value = tool.approver_group || "";
    timeout.value = tool.approval_timeout ? String(tool.approval_timeout) : "";
    if (people) people.value = String(tool.approvals_required || 1);
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
    h("h2", { class: "panel-title", id: id("title") }, gettext("Approval of "), h("code", {}, tool.full_name)),
    h("label", { class: "check" }, requires, gettext(" Every call waits for a person's approval")),
    h("label", { for: id("group") }, gettext("Who decides")),
    group,
    h("label", { for: id("timeout") }, gettext("Rejected when undecided after (seconds; blank: never)")),
    timeout,
    people ? h("label", { for: id("people") }, gettext("Approvals needed, each by a different person (2: the two-person rule; never the requester)")) : null,
    people,
    self ? h("label", { class: "check" }, self, gettext(" The requester may approve her own calls, and always allow the tool for her session")) : null,
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
    if (people && people.value) body.approvals_required = Number(people.value);
    save.disabled = true;
    const words = body.requires_approval ? gettext("calls wait for approval") : gettext("calls need no approval");
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

/** A tool row's approval summary and dialog, and its editor button. */
function toolEditing(tool) {
  const [opener, dialog] = approvalSettings(tool);
  const edit = h("button", { type: "button", class: "button small ghost tool-edit", "aria-haspopup": "dialog", "aria-label": interpolate(gettext("Edit %(full_name)s"), { full_name: tool.full_name }, true), title: gettext("Risk, kill switch, approval and execution policy"), dataset: { tool: tool.full_name } }, gettext("Edit"));
  edit.addEventListener("click", () => toolEditor.open(tool, opener));
  return [opener, dialog, edit];
}

/** The tool editor: a tool's risk, kill switch and policy override, with the
 * effective policy (code defaults, then settings, then the override) read back from
 * GET /api/tools/{name}/; its approval opens the approval dialog. One dialog for all. */
const toolEditor = (() => {
  let tool = null;
  let approvalOpener = null;
  const title = h("code", {});
  const risk = h("select", { id: "tool-risk" }, ["read", "write", "dangerous"].map((value) => h("option", { value }, value)));
  const enabled = h("input", { type: "checkbox", id: "tool-enabled" });
  const approval = h("span", { class: "muted", id: "tool-approval" });
  const approvalButton = h("button", { type: "button", class: "button small ghost" }, gettext("Approval settings…"));
  const override = h("textarea", { id: "tool-policy", rows: "4", spellcheck: "false", placeholder: '{"timeout": 10, "retries": 2}' });
  const errors = h("p", { class: "form-error", role: "alert" });
  const effective = h("dl", { class: "policy-list", id: "tool-effective-policy", "aria-live": "polite" });
  const save = h("button", { type: "submit", class: "button small primary" }, gettext("Save"));
  const cancel = h("button", { type: "button", class: "button small ghost" }, gettext("Cancel"));
  const form = h(
    "form",
    { class: "approval-form tool-form" },
    h("h2", { class: "panel-title", id: "tool-editor-title" }, gettext("Tool "), title),
    h("label", { for: "tool-risk" }, gettext("Risk")),
    risk,
    h("label", { class: "check" }, enabled, gettext(" Enabled (off: the kill switch, for everyone)")),
    h("div", { class: "row-line" }, h("span", {}, gettext("Approval: ")), approval, approvalButton),
    h("label", { for: "tool-policy" }, gettext("Policy override (JSON; keys left out keep the default, null switches a limit off)")),
    override,
    errors,
    h("h3", { class: "small-title" }, gettext("Effective policy")),
    effective,
    h("div", { class: "answer-buttons" }, save, cancel),
  );
  const dialog = h("dialog", { class: "approval-dialog tool-dialog", id: "tool-editor", "aria-labelledby": "tool-editor-title" }, form);
  document.body.append(dialog);

  async function showEffective() {
    clear(effective, h("dd", { class: "muted" }, gettext("Loading…")));
    try {
      const detail = await api(`/api/tools/${encodeURIComponent(tool.full_name)}/`);
      const own = detail.policy || {};
      clear(
        effective,
        Object.entries(detail.effective_policy).map(([key, value]) =>
          h("div", { class: "policy-item", dataset: { key, overridden: String(key in own) } }, h("dt", {}, key), h("dd", {}, value === null ? gettext("off") : JSON.stringify(value), key in own ? h("span", { class: "badge" }, gettext("override")) : null)),
        ),
      );
    } catch (error) {
      clear(effective, h("dd", { class: "bad" }, interpolate(gettext("Could not read it: %(error)s"), { error: error.message }, true)));
    }
  }

  function open(item, opener) {
    tool = item;
    approvalOpener = opener;
    title.textContent = tool.full_name;
    risk.value = tool.risk;
    enabled.checked = Boolean(tool.enabled);
    approval.textContent = approvalWords(tool);
    override.value = tool.policy && Object.keys(tool.policy).length ? JSON.stringify(tool.policy, null, 2) : "";
    errors.textContent = "";
    dialog.showModal();
    showEffective();
  }

  approvalButton.addEventListener("click", () => {
    dialog.close();
    approvalOpener.click();
  });
  cancel.addEventListener("click", () => dialog.close());
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errors.textContent = "";
    let policy;
    try {
      policy = override.value.trim() ? JSON.parse(override.value) : {};
    } catch {
      errors.textContent = gettext("The policy override is not JSON.");
      return;
    }
    const body = { risk: risk.value, enabled: enabled.checked, policy };
    save.disabled = true;
    try {
      const saved = await api(`/api/tools/${encodeURIComponent(tool.full_name)}/`, { method: "PATCH", body });
      Object.assign(tool, { risk: saved.risk, enabled: saved.enabled, policy: saved.policy });
      toast(interpolate(gettext("Saved: %(full_name)s (%(risk)s, %(enabled)s)."), { full_name: tool.full_name, risk: saved.risk, enabled: saved.enabled ? "enabled" : "disabled" }, true));
      repaintToolRow(tool);
      await loadDecisions(userColumns());
      for (const item of cells) paint(item);
      await showEffective();
    } catch (error) {
      errors.textContent = policyErrors(error);
    } finally {
      save.disabled = false;
    }
  });
  return { open };
})();

/** A refused save in words; a bad override names its fields ("timeout: …"). */
function policyErrors(error) {
  const policy = error.body && error.body.policy;
  if (!policy || typeof policy !== "object" || Array.isArray(policy)) return error.message;
  return Object.entries(policy)
    .map(([key, value]) => `${key}: ${[].concat(value).join(" ")}`)
    .join("; ");
}

/** After the tool editor saved: the row's risk badge and kill switch. */
function repaintToolRow(tool) {
  const tr = box.querySelector(`tr[data-target="tool:${CSS.escape(tool.full_name)}"]`);
  if (!tr) return;
  const badge = tr.querySelector(".badge.risk");
  if (badge) {
    badge.textContent = tool.risk;
    badge.dataset.risk = tool.risk;
  }
  const button = tr.querySelector(".switch");
  if (button) {
    button.setAttribute("aria-checked", String(tool.enabled));
    button.textContent = tool.enabled ? gettext("on") : gettext("off");
  }
}

/** The cell editor: allow or deny a toolset or tool to a user or group, for good or
 * until a date and time (the grant expires then), or inherit. One dialog for all. */
const cellEditor = (() => {
  let entry = null;
  const title = h("span", {});
  const effects = ["allow", "deny", "inherit"].map((effect) => h("input", { type: "radio", name: "cell-effect", value: effect, id: `cell-effect-${effect}` }));
  const expires = h("input", { type: "datetime-local", id: "cell-expires" });
  const hint = h("p", { class: "muted small" }, gettext("Blank: no end. The grant stops counting at that time; sessions follow."));
  // A condition on the call's arguments: only on an allow of one tool (docs/permissions.md).
  const condition = h("textarea", { id: "cell-condition", rows: 3, spellcheck: "false", placeholder: gettext('{"url": {"pattern": "^https://"}}'), "aria-describedby": "cell-condition-hint cell-condition-error" });
  const otherwise = h("select", { id: "cell-otherwise" }, h("option", { value: "deny" }, gettext("deny the call")), h("option", { value: "approval" }, gettext("ask for approval")));
  const conditionError = h("p", { class: "field-error small", id: "cell-condition-error", role: "alert" });
  const conditionBox = h(
    "div",
    { class: "cell-condition" },
    h("label", { for: "cell-condition" }, gettext("Condition (JSON)")),
    condition,
    h("p", { class: "muted small", id: "cell-condition-hint" }, gettext("Blank: no condition. Argument name → keywords: enum, pattern, prefix, minimum, maximum.")),
    h("label", { for: "cell-otherwise" }, gettext("Outside the condition")),
    otherwise,
    conditionError,
  );
  const save = h("button", { type: "submit", class: "button small primary" }, gettext("Save"));
  const cancel = h("button", { type: "button", class: "button small ghost" }, gettext("Cancel"));
  const form = h(
    "form",
    { class: "approval-form cell-form" },
    h("h2", { class: "panel-title", id: "cell-editor-title" }, gettext("Grant: "), title),
    h(
      "fieldset",
      { class: "effects" },
      h("legend", {}, gettext("Effect")),
      effects.map((radio) => h("label", { class: "check", for: radio.id }, radio, ` ${radio.value === "inherit" ? gettext("inherit (no grant)") : radio.value}`)),
    ),
    h("label", { for: "cell-expires" }, gettext("Expires at")),
    expires,
    hint,
    conditionBox,
    h("div", { class: "answer-buttons" }, save, cancel),
  );
  const dialog = h("dialog", { class: "approval-dialog cell-dialog", id: "cell-editor", "aria-labelledby": "cell-editor-title" }, form);
  document.body.append(dialog);
  const sync = () => {
    expires.disabled = effects[2].checked;
    condition.disabled = otherwise.disabled = !effects[0].checked;
  };
  for (const radio of effects) radio.addEventListener("change", sync);
  condition.addEventListener("input", () => {
    conditionError.textContent = "";
  });

  function open(item) {
    entry = item;
    const grant = grantOf(entry);
    title.textContent = interpolate(gettext("%(kind)s %(name)s for %(column_kind)s %(column)s"), { kind: kindWord(entry.kind), name: entry.name, column_kind: kindWord(entry.column.kind), column: entry.column.name }, true);
    const current = grant ? grant.effect : "inherit";
    for (const radio of effects) radio.checked = radio.value === current;
    expires.value = grant && grant.expires_at ? localInput(grant.expires_at) : "";
    expires.min = localInput(new Date().toISOString());
    conditionBox.hidden = entry.kind !== "tool";
    condition.value = grant && grant.condition ? JSON.stringify(grant.condition, null, 2) : "";
    otherwise.value = (grant && grant.otherwise) || "deny";
    conditionError.textContent = "";
    sync();
    dialog.showModal();
  }

  cancel.addEventListener("click", () => dialog.close());
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const effect = effects.find((radio) => radio.checked).value;
    const expiresAt = effect !== "inherit" && expires.value ? new Date(expires.value).toISOString() : null;
    const options = { expiresAt, always: effect !== "inherit" };
    conditionError.textContent = "";
    if (entry.kind === "tool" && effect === "allow") {
      let parsed = null;
      if (condition.value.trim()) {
        try {
          parsed = JSON.parse(condition.value);
        } catch (error) {
          conditionError.textContent = interpolate(gettext("Not valid JSON: %(error)s"), { error: error.message }, true);
          condition.focus();
          return;
        }
      }
      options.condition = parsed;
      options.otherwise = otherwise.value;
      options.onFieldErrors = (body) => {
        if (!body || !body.condition) return false;
        conditionError.textContent = [].concat(body.condition).join(" ");
        return true;
      };
    }
    save.disabled = true;
    if (await change(entry, effect, options)) dialog.close();
    save.disabled = false;
  });
  return { open };
})();

/** An ISO time as a datetime-local input's value, in the browser's time zone. */
function localInput(iso) {
  const when = new Date(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}T${pad(when.getHours())}:${pad(when.getMinutes())}`;
}

/** "approval: managers · 5 min", or "no approval". */
function approvalWords(tool) {
  if (!tool.requires_approval) return gettext("no approval");
  const who = tool.approver_group || gettext("owner");
  const until = tool.approval_timeout ? interpolate(gettext(" · %(seconds)s s"), { seconds: tool.approval_timeout }, true) : "";
  const self = tool.requester_may_approve ? gettext(" · self") : "";
  const people = tool.approvals_required > 1 ? interpolate(gettext(" · %(count)s people"), { count: tool.approvals_required }, true) : "";
  return interpolate(gettext("approval: %(who)s%(people)s%(until)s%(self)s"), { who, people, until, self }, true);
}

async function saveCatalog(path, body, done, undo = () => {}) {
  try {
    await api(path, { method: "PATCH", body });
  } catch (error) {
    toast(interpolate(gettext("Not saved: %(error)s"), { error: error.message }, true), "bad");
    undo();
    return false;
  }
  await loadDecisions(userColumns());
  for (const item of cells) paint(item);
  toast(interpolate(gettext("Saved: %(done)s."), { done }, true));
  return true;
}

function cell(column, kind, name) {
  const target = `${kind}:${name}`;
  const decision = h("span", { class: "decision" });
  const buttons = EFFECTS.map(({ effect, text, label }) => {
    const button = h("button", { type: "button", class: effect, "aria-pressed": "false", "aria-label": interpolate(gettext("%(label)s %(kind)s %(name)s for %(column_kind)s %(column)s"), { label: gettext(label), kind: kindWord(kind), name, column_kind: kindWord(column.kind), column: column.name }, true), title: gettext(label), dataset: { effect } }, text);
    button.addEventListener("click", () => change(entry, effect));
    return button;
  });
  const edit = h("button", { type: "button", class: "cell-edit", "aria-haspopup": "dialog", "aria-label": interpolate(gettext("Edit the grant of %(kind)s %(name)s for %(column_kind)s %(column)s"), { kind: kindWord(kind), name, column_kind: kindWord(column.kind), column: column.name }, true), title: gettext("Allow or deny until a date") }, "…");
  const toggle = h("div", { class: "toggle", role: "group", "aria-label": interpolate(gettext("%(kind)s %(name)s for %(column)s"), { kind: kindWord(kind), name, column: column.name }, true) }, buttons, edit);
  const entry = { column, kind, name, target, buttons, decision, toggle };
  edit.addEventListener("click", () => cellEditor.open(entry));
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
  entry.toggle.dataset.expires = grant && grant.expires_at ? "true" : "false";
  if (entry.column.kind === "group") {
    const count = entry.column.count;
    entry.decision.className = "decision muted";
    entry.decision.textContent = grant
      ? interpolate(ngettext("%(effect)s for its %(count)s member%(condition)s%(until)s", "%(effect)s for its %(count)s members%(condition)s%(until)s", count), {
          effect: effectWord(grant.effect),
          count,
          condition: grant.condition_text ? interpolate(gettext(", if %(condition)s"), { condition: grant.condition_text }, true) : "",
          until: until(grant),
        }, true)
      : gettext("no grant");
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
  entry.decision.textContent = `${decision.allowed ? "✓" : "✗"} ${decision.rule}${grant && grant.active ? until(grant) : ""}`;
  entry.decision.title = decision.rule;
}

/** What a row or a column is, in words: toolset, tool, user, group. */
function kindWord(kind) {
  const words = { toolset: gettext("toolset"), tool: gettext("tool"), user: gettext("user"), group: gettext("group") };
  return words[kind] || kind;
}

/** A grant's effect in words: "allow", "deny". */
function effectWord(effect) {
  const found = EFFECTS.find((item) => item.effect === effect);
  return found ? gettext(found.label) : effect;
}

/** " until 3 Dec 2026, 09:00", " (expired)", or "" for a grant without an end. */
function until(grant) {
  if (!grant.active) return gettext(" (expired)");
  if (!grant.expires_at) return "";
  const when = new Date(grant.expires_at).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  return interpolate(gettext(" until %(when)s"), { when }, true);
}

/** Save a cell: allow or deny (until `expiresAt`, an ISO time, or for good), or
 * inherit (no grant). True when saved. */
async function change(entry, effect, { expiresAt = null, always = false, condition, otherwise, onFieldErrors = null } = {}) {
  const grant = grantOf(entry);
  if (!always && (grant ? grant.effect : "inherit") === effect) return true;
  entry.toggle.classList.add("saving");
  try {
    if (effect === "inherit") {
      if (grant) await api(`/api/grants/${grant.id}/`, { method: "DELETE" });
    } else {
      const subject = entry.column.kind === "user" ? { user: entry.column.name } : { group: entry.column.name };
      const target = entry.kind === "tool" ? { tool: entry.name } : { toolset: entry.name };
      const conditional = otherwise === undefined ? {} : { condition, otherwise };
      await api("/api/grants/", { method: "POST", body: { ...subject, ...target, effect, expires_at: expiresAt, ...conditional } });
    }
    const affected = entry.column.kind === "user" ? [entry.column] : userColumns().filter((c) => c.groups.includes(entry.column.name));
    await Promise.all([loadGrants(), loadDecisions(affected)]);
    for (const item of cells) paint(item);
    const words = effect !== "inherit" && expiresAt ? until({ active: true, expires_at: expiresAt }) : "";
    toast(interpolate(gettext("Saved: %(effect)s %(kind)s %(name)s for %(column_kind)s %(column)s%(words)s."), { effect: effectWord(effect), kind: kindWord(entry.kind), name: entry.name, column_kind: kindWord(entry.column.kind), column: entry.column.name, words }, true));
    return true;
  } catch (error) {
    // Field errors the editor shows by their field; the rest as a toast.
    if (!(onFieldErrors && error.body && onFieldErrors(error.body))) toast(interpolate(gettext("Not saved: %(error)s"), { error: error.message }, true), "bad");
    return false;
  } finally {
    entry.toggle.classList.remove("saving");
  }
}

function applyFilter() {
  const query = filter.value.trim().toLowerCase();
  if (query && catalog) {
    // Build the tool rows of every toolset the query could find a tool in.
    for (const tr of box.querySelectorAll("tbody tr.toolset-row")) {
      const toolset = catalog.toolsets.find((ts) => ts.name === tr.dataset.name);
      if (toolset && (toolset.name.toLowerCase().includes(query) || toolset.tools.some((t) => t.toLowerCase().includes(query)))) tr.toolRows();
    }
  }
  for (const tr of box.querySelectorAll("tbody tr")) {
    const matches = !query || tr.dataset.name.toLowerCase().includes(query) || tr.dataset.toolset.toLowerCase().includes(query);
    tr.classList.toggle("hidden", !matches || (!query && tr.classList.contains("collapsed")));
  }
}

filter.addEventListener("input", applyFilter);
userSearch.addEventListener(
  "input",
  debounce(() => {
    page = 0;
    showUsers();
  }, 250),
);
load();
