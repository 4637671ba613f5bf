// An empty session's first screen: what the agent does, its tools with a line each,
// its conversation starters as buttons, and, on the offline demo model, what that
// model understands (from the API's `offline`, never written here).

import { api } from "./api.js";
import { clear, empty, h } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

/**
 * Fill `box` with the agent's introduction once its details arrive, unless the
 * session stopped being empty meanwhile (`isEmpty`). `onStart(text)` sends a starter;
 * a closed session shows no starters.
 */
export async function showIntro({ box, session, isEmpty, onStart }) {
  const name = session.agent || session.app_name;
  const [agent, tools] = await Promise.all([
    api(`/api/agents/${encodeURIComponent(name)}/`).catch(() => null),
    api(`/api/sessions/${encodeURIComponent(session.id)}/tools/`).then(
      (answer) => answer.tools || [],
      () => [],
    ),
  ]);
  if (!isEmpty()) return;
  if (!agent) {
    clear(box, empty(gettext("Nothing here yet"), interpolate(gettext("Say something to %(name)s. Its tool calls, hand-overs and state changes will appear here as they happen."), { name }, true)));
    return;
  }
  clear(
    box,
    h(
      "section",
      { class: "intro", id: "session-intro", "aria-labelledby": "intro-title" },
      h("h2", { id: "intro-title" }, interpolate(gettext("What %(name)s does"), { name: agent.name }, true)),
      h("p", { class: "intro-description", id: "intro-description" }, agent.description || gettext("Its author gave it no description.")),
      toolList(tools),
      session.closed_at ? null : starterButtons(agent.starters || [], onStart),
      agent.offline ? offlineNote(agent.offline) : null,
    ),
  );
}

function toolList(tools) {
  if (!tools.length) return h("p", { class: "muted small", id: "intro-tools" }, gettext("It has no tools: it answers from the model alone."));
  return [
    h("h3", { class: "intro-heading" }, interpolate(gettext("Its tools (%(tools)s)"), { tools: tools.length }, true)),
    h(
      "ul",
      { class: "intro-tools", id: "intro-tools" },
      tools.map((tool) =>
        h(
          "li",
          { dataset: { tool: tool.full_name }, class: tool.available ? "" : "unavailable" },
          h("code", {}, tool.name),
          tool.description ? h("span", {}, ` — ${tool.description}`) : null,
          tool.available ? null : h("span", { class: "muted" }, interpolate(gettext(" (unavailable to you: %(why)s)"), { why: tool.why || gettext("not allowed") }, true)),
        ),
      ),
    ),
  ];
}

function starterButtons(starters, onStart) {
  if (!starters.length) return null;
  const buttons = starters.map((text) => {
    const button = h("button", { type: "button", class: "starter" }, text);
    button.addEventListener("click", () => {
      for (const other of buttons) other.disabled = true;
      onStart(text);
    });
    return button;
  });
  return [h("h3", { class: "intro-heading", id: "starters-title" }, gettext("Try")), h("div", { class: "starters", id: "starters", role: "group", "aria-labelledby": "starters-title" }, buttons)];
}

function offlineNote(offline) {
  return h(
    "div",
    { class: "offline-note", id: "offline-note" },
    h("p", {}, h("strong", {}, offline.summary)),
    h("ul", {}, (offline.rules || []).map((rule) => h("li", {}, rule))),
  );
}
