// Agents (staff): every active agent, its model, instruction, tools and sub-agents;
// and each agent defined in code that does not load, with its error.

import { api } from "./api.js";
import { badge, clear, empty, failure, h, loading, timeAgo, toast } from "./dom.js";
import { refusalText } from "./refusals.js";

const box = document.getElementById("agents");

async function load() {
  clear(box, loading("Loading agents…"));
  let agents;
  try {
    agents = await api("/api/agents/");
  } catch (error) {
    clear(box, failure(error, load));
    return;
  }
  if (!agents.length) {
    clear(box, empty("No agents", "Register code agents with TOOLCRIB_EXTRA_AGENTS, or define one in the Django admin."));
    return;
  }
  clear(box, agents.map(card));
}

function card(agent) {
  if (agent.error) return brokenCard(agent);
  const model = agent.model_info || {};
  return h(
    "article",
    { class: "agent-card", dataset: { agent: agent.name } },
    h("div", { class: "agent-meta" }, h("h2", {}, agent.name), badge(agent.kind), badge(agent.source === "code" ? "code" : "database"), agent.is_active ? null : badge("inactive", "bad")),
    h("p", { class: "description" }, agent.description || "No description."),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Model"),
      h("dd", {}, h("code", {}, model.name || agent.model || "default"), " ", model.offline ? badge("offline", "wait") : badge(model.provider || "unknown")),
      model.offline ? [h("dt", {}, ""), h("dd", { class: "muted small" }, model.label)] : null,
      model.configured === false
        ? [h("dt", {}, ""), h("dd", { class: "state error compact" }, `Not configured: set ${(model.missing || []).join(", ") || "the provider's key"}.`)]
        : null,
      h("dt", {}, "Toolsets"),
      h("dd", {}, agent.toolsets && agent.toolsets.length ? agent.toolsets.join(", ") : h("span", { class: "muted" }, "none from settings")),
      h("dt", {}, "A2A"),
      h("dd", {}, a2aToggle(agent)),
      h("dt", {}, "Updated"),
      h("dd", {}, timeAgo(agent.updated_at)),
    ),
    agent.instruction ? h("details", {}, h("summary", {}, "Instruction"), h("div", { class: "instruction" }, agent.instruction)) : null,
    h("div", { class: "label" }, "Tree"),
    agent.tree && !agent.tree.error ? h("ul", { class: "tree" }, node(agent.tree)) : h("p", { class: "state error compact" }, agent.tree ? agent.tree.error : "Not built."),
  );
}

// Served over A2A (docs/a2a.md): staff switch it on; its card's address shows when on.
function a2aToggle(agent) {
  const cardUrl = `${location.origin}/a2a/${agent.name}/.well-known/agent-card.json`;
  const link = h("a", { href: cardUrl, class: "small", hidden: !agent.a2a }, "agent card");
  const box = h("input", { type: "checkbox", checked: Boolean(agent.a2a), "aria-label": `Serve ${agent.name} over A2A` });
  box.addEventListener("change", async () => {
    box.disabled = true;
    try {
      const saved = await api(`/api/agents/${encodeURIComponent(agent.name)}/`, { method: "PATCH", body: { a2a: box.checked } });
      link.hidden = !saved.a2a;
      toast(saved.a2a ? `${agent.name} is served over A2A.` : `${agent.name} is no longer served over A2A.`);
    } catch (error) {
      box.checked = !box.checked;
      toast(refusalText(error), "bad");
    } finally {
      box.disabled = false;
    }
  });
  return h("label", { class: "a2a-toggle" }, box, " served over A2A ", link);
}

// An agent whose code does not load: users never see it; every other agent works.
function brokenCard(agent) {
  return h(
    "article",
    { class: "agent-card broken", dataset: { agent: agent.name } },
    h("div", { class: "agent-meta" }, h("h2", {}, agent.name), badge("code"), badge("does not load", "bad")),
    h("p", { class: "state error compact" }, agent.error),
    h("p", { class: "muted small" }, "Users do not see it. Fix its module or its TOOLCRIB_EXTRA_AGENTS entry and restart Toolcrib (make run syncs the agents); every other agent works meanwhile."),
  );
}

function node(tree) {
  const tools = (tree.tools || []).map((tool) => (tool.toolset ? `${tool.toolset} (toolset)` : tool.name));
  return h(
    "li",
    {},
    h("code", {}, tree.name),
    " ",
    h("span", { class: "muted small" }, tree.model),
    tools.length ? h("div", { class: "small" }, h("span", { class: "muted" }, "tools: "), tools.join(", ")) : null,
    tree.sub_agents && tree.sub_agents.length ? h("ul", {}, tree.sub_agents.map(node)) : null,
  );
}

load();
