// Credentials a tool asks for (ADK's request_credential): the answer form of a
// request (POST /api/auth-requests/{id}/answer/), and the credentials I gave, with
// Revoke (GET / DELETE /api/credentials/). A secret goes from its input to the
// request body and nowhere else: the inputs are emptied as it is sent, and nothing
// here writes it into the page or logs it.

import { api, ApiError } from "./api.js";
import { clear, dateTime, empty, failure, h, loading, timeAgo, toast } from "./dom.js";

let fieldIds = 0;

/** The fields a request's scheme needs: [name, label, type, required]. */
export function fieldsFor(request) {
  const scheme = request.scheme;
  if (scheme === "apiKey") return [["api_key", "API key", "password", true]];
  if (scheme === "http") {
    const auth = (request.auth_config && request.auth_config.auth_scheme) || {};
    if (String(auth.scheme || "").toLowerCase() === "basic") {
      return [
        ["username", "Username", "text", true],
        ["password", "Password", "password", true],
      ];
    }
    return [["token", "Bearer token", "password", true]];
  }
  if (scheme === "oauth2" || scheme === "openIdConnect") {
    return [
      ["access_token", "Access token", "password", true],
      ["refresh_token", "Refresh token (optional)", "password", false],
    ];
  }
  return [];
}

/**
 * The form that answers a pending credential request.
 * @param {object} request a CredentialRequest from the API
 * @param {object} handlers onAnswered(run); onRefused(error) when the server says
 *   no for good (already answered, not yours)
 */
export function credentialForm(request, { onAnswered = () => {}, onRefused = () => {} } = {}) {
  const fields = fieldsFor(request);
  if (!fields.length) {
    return h("p", { class: "muted small" }, `A “${request.scheme}” credential cannot be given from the browser.`);
  }
  const status = h("span", { class: "muted small", role: "status" });
  const inputs = fields.map(([name, label, type, required]) => {
    const id = `credential-${request.id}-${name}-${(fieldIds += 1)}`;
    const input = h("input", { id, name, type, required, autocomplete: "off", spellcheck: "false" });
    return { name, input, row: h("div", { class: "credential-field" }, h("label", { for: id }, label), input) };
  });
  const button = h("button", { type: "submit", class: "button small primary" }, "Send credential");
  const form = h(
    "form",
    { class: "credential-form", dataset: { requestId: String(request.id) }, "aria-label": `Credential for ${request.tool_name || "the tool"}` },
    inputs.map((field) => field.row),
    h("div", { class: "answer-buttons" }, button, status),
    h("p", { class: "muted small" }, "Stored encrypted for you; the tool runs again with it. Revoke it any time on your sessions page."),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const answer = {};
    for (const { name, input } of inputs) {
      if (input.value) answer[name] = input.value;
      input.value = ""; // never kept in the page once sent
    }
    button.disabled = true;
    status.textContent = "Sending…";
    try {
      const run = await api(`/api/auth-requests/${encodeURIComponent(request.id)}/answer/`, { method: "POST", body: answer });
      status.textContent = "Sent: the tool runs again with it.";
      for (const { input } of inputs) input.disabled = true;
      onAnswered(run);
    } catch (error) {
      status.textContent = "";
      button.disabled = false;
      toast(`Not sent: ${error.message} Type it again to retry.`, "bad");
      if (isFinal(error)) onRefused(error);
    }
  });
  return form;
}

/** Refused for good (answered already, not yours, a scheme the server cannot take),
 * unlike a missing field, which the user can fix. */
function isFinal(error) {
  if (!(error instanceof ApiError)) return false;
  if (error.status === 403 || error.status === 404) return true;
  return error.status === 400 && Boolean(error.body && (error.body.status || error.body.scheme));
}

/** The credentials I gave tools, newest first, each with Revoke. */
export async function showCredentials(box) {
  clear(box, loading("Loading your credentials…"));
  let rows;
  try {
    rows = await api("/api/credentials/");
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      clear(box, empty("Credentials are not switched on here"));
      return;
    }
    clear(box, failure(error, () => showCredentials(box)));
    return;
  }
  if (!rows.length) {
    clear(box, empty("No credentials", "When a tool asks for an API key or a token and you give it, it is kept here until you revoke it."));
    return;
  }
  clear(box, h("ul", { class: "credential-list", id: "credential-list" }, rows.map((row) => credentialItem(row, box))));
}

function credentialItem(row, box) {
  const revoke = h("button", { type: "button", class: "button small reject", "aria-label": `Revoke ${row.key}` }, "Revoke");
  const li = h(
    "li",
    { dataset: { credential: String(row.id), key: row.key } },
    h(
      "div",
      { class: "credential-text" },
      h("code", { class: "credential-key" }, row.key),
      h("div", { class: "muted small" }, [row.auth_type, row.tool_name && `for ${row.tool_name}`, row.agent && `(${row.agent})`].filter(Boolean).join(" ")),
      h(
        "div",
        { class: "muted small" },
        "given ",
        timeAgo(row.created_at),
        row.last_used_at ? [" · last used ", timeAgo(row.last_used_at)] : null,
      ),
    ),
    revoke,
  );
  revoke.addEventListener("click", async () => {
    if (!window.confirm(`Revoke ${row.key}? A tool that needs it will ask again.`)) return;
    revoke.disabled = true;
    try {
      await api(`/api/credentials/${encodeURIComponent(row.id)}/`, { method: "DELETE" });
      toast(`Revoked ${row.key}.`);
      li.remove();
      if (!box.querySelector("li")) showCredentials(box);
    } catch (error) {
      revoke.disabled = false;
      toast(`Not revoked: ${error.message}`, "bad");
      if (error instanceof ApiError && error.status === 404) showCredentials(box);
    }
  });
  return li;
}

/** An answered request, in words. */
export function answeredNote(request) {
  const when = request.answered_at ? ` ${dateTime(request.answered_at)}` : "";
  return h("p", { class: "approval-outcome", dataset: { outcome: "answered" } }, `Credential given${when}; the tool ran again with it.`);
}
