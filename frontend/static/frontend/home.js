// Home: the sessions sidebar (sidebar.js) and, beside it, a welcome: the agents I may
// start a chat with, each with its conversation starters (a starter starts the chat
// and sends itself); the credentials I gave tools.

import { api } from "./api.js";
import { showCredentials } from "./credentials.js";
import { badge, clear, empty, failure, h, loading, toast } from "./dom.js";
import { gettext, interpolate, ngettext } from "./i18n.js";
import { initSidebar, startChat, usableAgents } from "./sidebar.js";

const agentsBox = document.getElementById("agents");
const STARTERS_SHOWN = 3;

async function loadAgents() {
  clear(agentsBox, loading(gettext("Loading agents…")));
  let usable;
  try {
    usable = await usableAgents();
  } catch (error) {
    clear(agentsBox, failure(error, () => window.location.reload()));
    return;
  }
  if (!usable.length) {
    clear(agentsBox, empty(gettext("No agents you may use yet"), gettext("Ask an administrator to add one.")));
    return;
  }
  clear(agentsBox, h("ul", { class: "agent-picker" }, usable.map(agentOption)));
}

function agentOption(agent) {
  const tools = countTools(agent.tree);
  const model = agent.model_info || {};
  const subs = (agent.sub_agents || []).length;
  const button = h(
    "button",
    { type: "button", class: "button primary small", dataset: { agent: agent.name }, "aria-label": interpolate(gettext("Start a session with %(agent)s"), { agent: agent.name }, true) },
    gettext("Start"),
  );
  button.addEventListener("click", () => startChat(agent.name, button));
  return h(
    "li",
    { class: "agent-option" },
    h(
      "div",
      { class: "agent-text" },
      h("div", { class: "agent-name" }, agent.name),
      h("p", { class: "description" }, agent.description || gettext("No description.")),
      h(
        "div",
        { class: "agent-meta" },
        model.offline ? badge(gettext("offline model"), "wait") : badge(model.name || agent.model || gettext("default model")),
        tools ? badge(interpolate(ngettext("%(n)s tool", "%(n)s tools", tools), { n: tools }, true)) : null,
        subs ? badge(interpolate(ngettext("%(n)s sub-agent", "%(n)s sub-agents", subs), { n: subs }, true)) : null,
      ),
      starters(agent),
    ),
    button,
  );
}

/** A few of the agent's starters: a click starts a chat that opens with it. */
function starters(agent) {
  const list = (agent.starters || []).slice(0, STARTERS_SHOWN);
  if (!list.length) return null;
  const buttons = list.map((text) => {
    const button = h("button", { type: "button", class: "starter small", dataset: { starterOf: agent.name } }, text);
    button.addEventListener("click", () => startWith(agent.name, text, buttons));
    return button;
  });
  return h("div", { class: "starters home-starters", role: "group", "aria-label": interpolate(gettext("Starters for %(agent)s"), { agent: agent.name }, true) }, buttons);
}

async function startWith(agent, text, buttons) {
  for (const button of buttons) button.disabled = true;
  try {
    const session = await api("/api/sessions/", { method: "POST", body: { agent } });
    await api(`/api/sessions/${encodeURIComponent(session.id)}/messages/`, { method: "POST", body: { text } });
    window.location.assign(`/sessions/${session.id}/`);
  } catch (error) {
    toast(interpolate(gettext("Could not start a session: %(why)s"), { why: error.message }, true), "bad");
    for (const button of buttons) button.disabled = false;
  }
}

function countTools(tree) {
  if (!tree || tree.error) return 0;
  return (tree.tools || []).length + (tree.sub_agents || []).reduce((sum, sub) => sum + countTools(sub), 0);
}

initSidebar();
loadAgents();
showCredentials(document.getElementById("credentials"));
