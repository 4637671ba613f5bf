// A session's side panels: the tools the user may use now, state by scope, and
// artifacts (every version downloadable, uploads). Each shows loading, empty and
// error states, and can be called again to refresh.

import { api, ApiError } from "./api.js";
import { badge, clear, dateTime, empty, failure, h, json, loading, toast } from "./dom.js";
import { gettext, gettext_noop, interpolate } from "./i18n.js";
import { previewArtifact } from "./preview.js";

const RISK_TONES = { dangerous: "bad", write: "wait" };
const SCOPES = [
  ["session", gettext_noop("this session")],
  ["user", gettext_noop("all your sessions of this agent")],
  ["app", gettext_noop("everyone using this agent")],
];

/**
 * The tools the user may use on `agent` right now, and (with `sessionId`) the session's
 * tools that are unavailable and why; `changed` says why it refreshed.
 */
export async function showTools({ box, count, note, agent, sessionId = null, changed = false }) {
  if (!box.childElementCount) clear(box, loading(gettext("Loading tools…")));
  const again = () => showTools({ box, count, note, agent, sessionId });
  let tools;
  let sessionTools = null;
  let whyError = null;
  const why = sessionId
    ? api(`/api/sessions/${encodeURIComponent(sessionId)}/tools/`).then(
        (answer) => { sessionTools = answer.tools || []; },
        (error) => { whyError = error; },
      )
    : Promise.resolve();
  try {
    [tools] = await Promise.all([api(`/api/agents/${encodeURIComponent(agent)}/tools/`), why]);
  } catch (error) {
    clear(box, failure(error, again));
    return;
  }
  count.textContent = String(tools.length);
  if (changed) {
    note.textContent = interpolate(gettext("Updated %(time)s: what you may use changed."), { time: new Date().toLocaleTimeString() }, true);
    const panel = box.closest(".panel");
    panel.classList.remove("flash");
    void panel.offsetWidth; // restart the highlight animation
    panel.classList.add("flash");
  }
  const conditions = new Map((sessionTools || []).filter((t) => t.available && t.condition_text).map((t) => [t.full_name, t.condition_text]));
  const unavailable = (sessionTools || []).filter((t) => !t.available);
  clear(
    box,
    tools.length
      ? h("ul", { class: "tool-list", id: "tool-list" }, tools.map((tool) => toolItem(tool, conditions.get(tool.full_name))))
      : empty(gettext("No tools available"), gettext("This agent has no tools you may use right now.")),
    unavailable.length
      ? h(
          "div",
          { class: "tool-unavailable", id: "tool-unavailable" },
          h("h3", { class: "small" }, interpolate(gettext("Unavailable (%(unavailable)s)"), { unavailable: unavailable.length }, true)),
          h("ul", { class: "tool-list", id: "tool-unavailable-list" }, unavailable.map(unavailableItem)),
        )
      : null,
    whyError ? h("p", { class: "muted small", id: "tool-why-error" }, interpolate(gettext("Could not say which tools are unavailable: %(message)s"), { message: whyError.message }, true)) : null,
  );
}

function toolItem(tool, conditionText) {
  const title = interpolate(gettext("%(full_name)s (on %(agent)s)%(description)s"), { full_name: tool.full_name, agent: tool.agent, description: tool.description ? `: ${tool.description}` : "" }, true);
  return h(
    "li",
    { dataset: { tool: tool.full_name }, title },
    h("div", { class: "tool-line" }, h("code", {}, tool.name), badge(tool.risk, RISK_TONES[tool.risk] || "")),
    h("div", { class: "muted small tool-rule" }, tool.rule),
    conditionText ? h("div", { class: "small tool-condition" }, interpolate(gettext("Only when %(conditionText)s"), { conditionText }, true)) : null,
  );
}

/** A tool of the session that the agent cannot call now, with the reason in plain words. */
function unavailableItem(tool) {
  return h(
    "li",
    { dataset: { tool: tool.full_name, reason: tool.reason || "" }, class: "unavailable", title: tool.full_name },
    h("div", { class: "tool-line" }, h("code", {}, tool.name), badge(gettext("unavailable"), "bad")),
    h("div", { class: "small tool-why" }, tool.why ? `${tool.why[0].toUpperCase()}${tool.why.slice(1)}.` : gettext("Unavailable.")),
  );
}

/** Session, user and app state as the agent sees it. */
export async function showState({ box, sessionId }) {
  if (!box.childElementCount) clear(box, loading(gettext("Loading state…")));
  let state;
  try {
    state = await api(`/api/sessions/${sessionId}/state/`);
  } catch (error) {
    clear(box, failure(error, () => showState({ box, sessionId })));
    return;
  }
  clear(
    box,
    SCOPES.map(([scope, meaning]) => {
      const entries = Object.entries(state[scope] || {});
      return h(
        "div",
        { class: "scope", dataset: { scope } },
        h("h3", {}, scope, h("span", { class: "muted small" }, ` · ${gettext(meaning)}`)),
        entries.length
          ? h("dl", { class: "kv" }, entries.map(([key, value]) => [h("dt", {}, key), h("dd", {}, stateValue(value))]))
          : h("p", { class: "muted small" }, gettext("Nothing stored.")),
      );
    }),
  );
}

function stateValue(value) {
  if (typeof value === "object" && value !== null) return h("pre", { class: "json" }, json(value));
  return JSON.stringify(value);
}

/**
 * The session's artifacts with their versions, and an upload form. `seen` (name ->
 * version, from the events) stands in on a server without the artifacts API.
 */
export async function showArtifacts({ box, sessionId, seen, closed = false }) {
  if (!box.childElementCount) clear(box, loading(gettext("Loading artifacts…")));
  let listing;
  try {
    listing = await api(`/api/sessions/${sessionId}/artifacts/`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      showSeenArtifacts(box, seen);
      return;
    }
    clear(box, failure(error, () => showArtifacts({ box, sessionId, seen, closed })));
    return;
  }
  const url = (filename, version) => `/api/sessions/${sessionId}/artifacts/${encodeURIComponent(filename)}/?version=${version}`;
  clear(
    box,
    listing.length
      ? h("ul", { class: "artifact-list", id: "artifact-list" }, listing.map((artifact) => artifactItem(artifact, url, sessionId)))
      : h("p", { class: "muted small" }, gettext("No artifacts saved in this session.")),
    // A closed session takes no files: no upload form.
    closed ? null : uploadForm(sessionId, () => showArtifacts({ box, sessionId, seen })),
  );
}

function artifactItem(artifact, url, sessionId) {
  const latest = artifact.versions[artifact.versions.length - 1] || {};
  const preview = h("button", { type: "button", class: "button ghost small preview-button", "aria-label": interpolate(gettext("Preview %(filename)s"), { filename: artifact.filename }, true) }, gettext("Preview"));
  preview.addEventListener("click", () =>
    previewArtifact({ sessionId, filename: artifact.filename, version: latest.version, mimeType: latest.mime_type || "", size: latest.size, from: preview }),
  );
  return h(
    "li",
    { dataset: { artifact: artifact.filename } },
    h("a", { href: url(artifact.filename, artifact.latest), download: "", title: interpolate(gettext("%(mime_type)s · %(size)s bytes"), { mime_type: latest.mime_type || "", size: latest.size ?? "?" }, true) }, artifact.filename),
    h("span", {}, artifact.scope === "user" ? badge(gettext("user"), "live") : null, " ", badge(`v${artifact.latest}`), " ", preview),
    artifact.versions.length > 1
      ? h(
          "div",
          { class: "versions muted" },
          gettext("versions:"),
          artifact.versions.map((version) => h("a", { href: url(artifact.filename, version.version), download: "", title: dateTime(version.created_at) }, `v${version.version}`)),
        )
      : null,
  );
}

function uploadForm(sessionId, onUploaded) {
  const input = h("input", { type: "file", name: "file", "aria-label": gettext("File to upload as an artifact") });
  const button = h("button", { type: "submit", class: "button small" }, gettext("Upload"));
  const form = h("form", { class: "upload", id: "artifact-upload" }, input, button);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!input.files.length) {
      input.focus();
      return;
    }
    const body = new FormData();
    body.append("file", input.files[0]);
    button.disabled = true;
    try {
      const saved = await api(`/api/sessions/${sessionId}/artifacts/`, { method: "POST", form: body });
      toast(interpolate(gettext("Uploaded %(filename)s (v%(version)s)."), { filename: saved.filename, version: saved.version }, true));
      onUploaded();
    } catch (error) {
      toast(interpolate(gettext("Not uploaded: %(error)s"), { error: error.message }, true), "bad");
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

function showSeenArtifacts(box, seen) {
  if (!seen.size) {
    clear(box, h("p", { class: "muted small" }, gettext("No artifacts saved in this session.")));
    return;
  }
  clear(box, h("ul", { class: "artifact-list" }, [...seen].map(([name, version]) => h("li", {}, h("span", {}, name), badge(`v${version}`)))));
}
