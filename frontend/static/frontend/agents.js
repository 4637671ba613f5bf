// Agents (staff): every agent, its model, instruction, tools and sub-agents, and
// each agent defined in code that does not load, with its error; and the builder:
// create, edit, draft and try, publish, duplicate, archive, versions.

import { openBuilder } from "./agentform.js";
import { openVersions } from "./agentversions.js";
import { api } from "./api.js";
import { badge, clear, empty, failure, h, loading, timeAgo, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";
import { refusalText } from "./refusals.js";
import { renderMarkdown } from "./markdown.js";

const box = document.getElementById("agents");
const panel = document.getElementById("agent-panel");
let options = null;

// What the builder offers (models, toolsets, agents, groups), fetched once a page.
async function builderOptions() {
  options = options || (await api("/api/agents/options/"));
  return options;
}

async function load() {
  clear(box, loading(gettext("Loading agents…")));
  let agents;
  try {
    agents = await api("/api/agents/", { query: { archived: "all" } });
  } catch (error) {
    clear(box, failure(error, load));
    return;
  }
  if (!agents.length) {
    clear(box, empty(gettext("No agents"), gettext("Make one with New agent, or register code agents with TOOLCRIB_EXTRA_AGENTS.")));
    return;
  }
  clear(box, agents.map(card));
}

function closePanel() {
  panel.hidden = true;
  clear(panel);
}

function showPanel() {
  panel.hidden = false;
  panel.scrollIntoView({ block: "start" });
}

async function edit(name, asDraft = false) {
  let agent = null;
  try {
    await builderOptions();
  } catch (error) {
    toast(error.message, "bad");
    return;
  }
  if (name) {
    try {
      agent = await api(`/api/agents/${encodeURIComponent(name)}/${asDraft ? "draft/" : ""}`);
    } catch (error) {
      if (!(asDraft && error.status === 404)) return toast(error.message, "bad");
      agent = await api(`/api/agents/${encodeURIComponent(name)}/`); // a first draft starts from the agent
      agent = { ...agent, draft_of: agent.name };
    }
  }
  showPanel();
  openBuilder(panel, agent, options, { asDraft, cancel: closePanel, saved: (_, draft) => (draft ? edit(name || _.name, true).then(load) : (closePanel(), load())) });
}

async function act(path, body, message) {
  try {
    const answer = await api(path, { method: "POST", body });
    toast(message, "ok");
    return answer;
  } catch (error) {
    toast(error.message, "bad");
    return null;
  }
}

async function tryDraft(name) {
  try {
    const session = await api("/api/sessions/", { method: "POST", body: { agent: name, draft: true } });
    window.location.assign(`/sessions/${encodeURIComponent(session.id)}/`);
  } catch (error) {
    toast(error.message, "bad");
  }
}

async function discardDraft(name) {
  if (!window.confirm(interpolate(gettext("Discard the draft of %(name)s? Its edits are lost; sessions that tried it go on with the published agent."), { name }, true))) return;
  try {
    await api(`/api/agents/${encodeURIComponent(name)}/draft/`, { method: "DELETE" });
    toast(gettext("Draft discarded."), "ok");
  } catch (error) {
    toast(error.message, "bad");
  }
  load();
}

/** The copy's name in a form of its own, so a refused name says why next to it. */
function duplicate(name) {
  const input = h("input", { id: "duplicate-name", name: "name", value: `${name}-copy`, maxlength: 92, required: true, autocomplete: "off", "aria-describedby": "duplicate-name-error" });
  const error = h("p", { class: "field-error small", id: "duplicate-name-error", role: "alert" });
  const form = h(
    "form",
    { id: "duplicate-form", class: "stack", novalidate: true },
    h("h2", { class: "panel-title" }, interpolate(gettext("Duplicate %(name)s"), { name }, true)),
    h("div", { class: "field" }, h("label", { for: "duplicate-name" }, gettext("Name of the copy")), input, error),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "button primary small" }, gettext("Duplicate")), h("button", { type: "button", class: "button ghost small", onclick: closePanel }, gettext("Cancel"))),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const copy = input.value.trim();
    try {
      await api(`/api/agents/${encodeURIComponent(name)}/duplicate/`, { method: "POST", body: { name: copy } });
    } catch (refused) {
      const body = refused.body && typeof refused.body === "object" ? refused.body : {};
      error.textContent = [].concat(body.name || Object.values(body).flat()).join(" ") || refused.message;
      input.focus();
      return;
    }
    toast(interpolate(gettext("Duplicated as %(copy)s."), { copy }, true), "ok");
    closePanel();
    load();
  });
  clear(panel, form);
  showPanel();
  input.select();
}

function actions(agent) {
  const name = agent.name;
  const path = `/api/agents/${encodeURIComponent(name)}/`;
  const button = (label, onclick, tone = "") => h("button", { type: "button", class: `button small ${tone}`.trim(), onclick, dataset: { action: label } }, label);
  if (agent.source === "code") return h("div", { class: "card-actions" }, button(gettext("Edit"), () => edit(name)));
  return h(
    "div",
    { class: "card-actions" },
    button(gettext("Edit"), () => edit(name)),
    button(gettext("Edit draft"), () => edit(name, true)),
    agent.has_draft ? button(gettext("Try draft"), () => tryDraft(name)) : null,
    agent.has_draft ? button(gettext("Publish draft"), async () => (await act(`${path}publish/`, undefined, gettext("Draft published."))) && load(), "primary") : null,
    agent.has_draft ? button(gettext("Discard draft"), () => discardDraft(name), "danger") : null,
    button(gettext("Versions"), () => {
      showPanel();
      openVersions(panel, name, { close: closePanel, changed: () => (load(), openVersions(panel, name, { close: closePanel, changed: load })) });
    }),
    button(gettext("Duplicate"), () => duplicate(name)),
    agent.archived
      ? button(gettext("Restore"), async () => (await act(`${path}restore/`, undefined, gettext("Restored."))) && load())
      : button(gettext("Archive"), async () => (await act(`${path}archive/`, undefined, gettext("Archived: no new sessions; old ones stay readable."))) && load(), "danger"),
  );
}

function card(agent) {
  if (agent.error) return brokenCard(agent);
  const model = agent.model_info || {};
  return h(
    "article",
    { class: "agent-card", dataset: { agent: agent.name } },
    h("div", { class: "agent-meta" }, h("h2", {}, agent.name), badge(agent.kind), badge(agent.source === "code" ? gettext("code") : gettext("database")), agent.archived ? badge(gettext("archived"), "bad") : null, agent.has_draft ? badge(gettext("draft"), "wait") : null),
    h("p", { class: "description" }, agent.description || gettext("No description.")),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, gettext("Model")),
      h("dd", {}, h("code", {}, model.name || agent.model || gettext("default")), " ", model.offline ? badge(gettext("offline"), "wait") : badge(model.provider || gettext("unknown"))),
      model.offline ? [h("dt", {}, ""), h("dd", { class: "muted small" }, model.label)] : null,
      model.configured === false
        ? [h("dt", {}, ""), h("dd", { class: "state error compact" }, model.problem || interpolate(gettext("Not configured: set %(missing)s."), { missing: (model.missing || []).join(", ") || gettext("the provider's key") }, true))]
        : null,
      h("dt", {}, gettext("Toolsets")),
      h("dd", {}, agent.toolsets && agent.toolsets.length ? agent.toolsets.join(", ") : h("span", { class: "muted" }, gettext("none whole"))),
      agent.tools && agent.tools.length ? [h("dt", {}, gettext("Single tools")), h("dd", {}, agent.tools.map((t) => `${t.toolset}.${t.tool}`).join(", "))] : null,
      h("dt", {}, gettext("Who may use it")),
      h("dd", {}, agent.groups && agent.groups.length ? agent.groups.join(", ") : h("span", { class: "muted" }, gettext("everyone signed in"))),
      h("dt", {}, gettext("A2A")),
      h("dd", {}, a2aToggle(agent)),
      h("dt", {}, gettext("Updated")),
      h("dd", {}, timeAgo(agent.updated_at)),
    ),
    agent.source === "code" ? h("p", { class: "muted small" }, gettext("Defined in code: only who may use it, its tool choice and retention change here.")) : null,
    agent.instruction ? h("details", {}, h("summary", {}, gettext("Instruction")), renderMarkdown(agent.instruction, { headingShift: 2 })) : null,
    h("div", { class: "label" }, gettext("Tree")),
    agent.tree && !agent.tree.error ? h("ul", { class: "tree" }, node(agent.tree)) : h("p", { class: "state error compact" }, agent.tree ? agent.tree.error : gettext("Not built.")),
    actions(agent),
  );
}

// Served over A2A (docs/a2a.md): staff switch it on; its card's address shows when on.
function a2aToggle(agent) {
  const cardUrl = `${location.origin}/a2a/${agent.name}/.well-known/agent-card.json`;
  // Named for its agent (a page lists many), and outside the label: a link inside
  // a label is interactive content in the checkbox's label.
  const link = h("a", { href: cardUrl, class: "small", hidden: !agent.a2a, "aria-label": interpolate(gettext("Agent card of %(name)s"), { name: agent.name }, true) }, gettext("agent card"));
  const box = h("input", { type: "checkbox", checked: Boolean(agent.a2a), "aria-label": interpolate(gettext("Serve %(name)s over A2A"), { name: agent.name }, true) });
  box.addEventListener("change", async () => {
    box.disabled = true;
    try {
      const saved = await api(`/api/agents/${encodeURIComponent(agent.name)}/`, { method: "PATCH", body: { a2a: box.checked } });
      link.hidden = !saved.a2a;
      toast(saved.a2a ? interpolate(gettext("%(name)s is served over A2A."), { name: agent.name }, true) : interpolate(gettext("%(name)s is no longer served over A2A."), { name: agent.name }, true));
    } catch (error) {
      box.checked = !box.checked;
      toast(refusalText(error), "bad");
    } finally {
      box.disabled = false;
    }
  });
  return h("span", { class: "a2a-toggle" }, h("label", {}, box, gettext(" served over A2A")), " ", link);
}

// An agent whose code does not load: users never see it; every other agent works.
function brokenCard(agent) {
  return h(
    "article",
    { class: "agent-card broken", dataset: { agent: agent.name } },
    h("div", { class: "agent-meta" }, h("h2", {}, agent.name), badge(gettext("code")), badge(gettext("does not load"), "bad")),
    h("p", { class: "state error compact" }, agent.error),
    h("p", { class: "muted small" }, gettext("Users do not see it. Fix its module or its TOOLCRIB_EXTRA_AGENTS entry and restart Toolcrib (make run syncs the agents); every other agent works meanwhile.")),
  );
}

function node(tree) {
  const tools = (tree.tools || []).map((tool) => (tool.toolset ? interpolate(gettext("%(toolset)s (toolset)"), { toolset: tool.toolset }, true) : tool.name));
  return h(
    "li",
    {},
    h("code", {}, tree.name),
    " ",
    h("span", { class: "muted small" }, tree.model),
    tools.length ? h("div", { class: "small" }, h("span", { class: "muted" }, gettext("tools: ")), tools.join(", ")) : null,
    tree.sub_agents && tree.sub_agents.length ? h("ul", {}, tree.sub_agents.map(node)) : null,
  );
}

document.getElementById("new-agent").addEventListener("click", () => edit(null));
load();
