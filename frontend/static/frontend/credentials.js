// The credentials I gave tools, with Revoke (GET / DELETE /api/credentials/). A
// request for one is answered on its card (requests.js); its secret is never shown.

import { api, ApiError } from "./api.js";
import { clear, empty, failure, h, loading, timeAgo, toast } from "./dom.js";

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
