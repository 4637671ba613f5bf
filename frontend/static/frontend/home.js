// Home: start a session with an agent; my sessions with their last activity and status;
// the credentials I gave tools, with Revoke.

import { api } from "./api.js";
import { showCredentials } from "./credentials.js";
import { badge, clear, empty, failure, h, loading, statusBadge, timeAgo, toast } from "./dom.js";

const agentsBox = document.getElementById("agents");
const sessionsBox = document.getElementById("sessions");

async function loadAgents() {
  clear(agentsBox, loading("Loading agents…"));
  let agents;
  try {
    agents = await api("/api/agents/");
  } catch (error) {
    clear(agentsBox, failure(error, loadAgents));
    return;
  }
  if (!agents.length) {
    clear(agentsBox, empty("No agents you may use yet", "Ask an administrator to add one."));
    return;
  }
  clear(agentsBox, h("ul", { class: "agent-picker" }, agents.map(agentOption)));
}

function agentOption(agent) {
  const tools = countTools(agent.tree);
  const model = agent.model_info || {};
  const button = h("button", { type: "button", class: "button primary small", dataset: { agent: agent.name }, "aria-label": `Start a session with ${agent.name}` }, "Start");
  button.addEventListener("click", () => start(agent.name, button));
  return h(
    "li",
    { class: "agent-option" },
    h(
      "div",
      { class: "agent-text" },
      h("div", { class: "agent-name" }, agent.name),
      h("p", { class: "description" }, agent.description || "No description."),
      h(
        "div",
        { class: "agent-meta" },
        model.offline ? badge("offline model", "wait") : badge(model.name || agent.model || "default model"),
        tools ? badge(`${tools} tool${tools === 1 ? "" : "s"}`) : null,
        agent.sub_agents && agent.sub_agents.length ? badge(`${agent.sub_agents.length} sub-agent${agent.sub_agents.length === 1 ? "" : "s"}`) : null,
      ),
    ),
    button,
  );
}

function countTools(tree) {
  if (!tree || tree.error) return 0;
  return (tree.tools || []).length + (tree.sub_agents || []).reduce((sum, sub) => sum + countTools(sub), 0);
}

async function start(agent, button) {
  button.disabled = true;
  button.textContent = "Starting…";
  try {
    const session = await api("/api/sessions/", { method: "POST", body: { agent } });
    window.location.assign(`/sessions/${session.id}/`);
  } catch (error) {
    toast(`Could not start a session: ${error.message}`, "bad");
    button.disabled = false;
    button.textContent = "Start";
  }
}

async function loadSessions() {
  clear(sessionsBox, loading("Loading your sessions…"));
  let sessions;
  try {
    sessions = await api("/api/sessions/");
  } catch (error) {
    clear(sessionsBox, failure(error, loadSessions));
    return;
  }
  if (!sessions.length) {
    clear(sessionsBox, empty("No sessions yet", "Start one with an agent from the list; it will be listed here."));
    return;
  }
  clear(
    sessionsBox,
    h(
      "table",
      { class: "table", id: "sessions-table" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, "Agent"),
          h("th", { scope: "col" }, "Last activity"),
          h("th", { scope: "col" }, "Status"),
          h("th", { scope: "col", class: "num hide-phone" }, "Events"),
          h("th", { scope: "col", class: "hide-phone" }, "Started"),
        ),
      ),
      h("tbody", {}, sessions.map(sessionRow)),
    ),
  );
}

const WAITING_FOR = { approval: "waiting for approval", credential: "waiting for a credential", result: "waiting for a result" };

/** A run's status in words: a run that waits for a person says for what. */
function runBadge(run) {
  if (!run) return h("span", { class: "muted" }, "new");
  if (run.status === "waiting") return badge(WAITING_FOR[run.waiting_for] || "waiting for a person", "wait");
  return statusBadge(run.status);
}

function sessionRow(session) {
  const run = session.last_run;
  return h(
    "tr",
    { dataset: { session: session.id, status: run ? run.status : "" } },
    h("td", {}, h("a", { href: `/sessions/${session.id}/`, class: "strong" }, session.agent || session.app_name)),
    h("td", {}, timeAgo(session.updated_at)),
    h("td", {}, runBadge(run)),
    h("td", { class: "num hide-phone" }, String(session.last_seq)),
    h("td", { class: "hide-phone" }, timeAgo(session.created_at)),
  );
}

loadAgents();
loadSessions();
showCredentials(document.getElementById("credentials"));
