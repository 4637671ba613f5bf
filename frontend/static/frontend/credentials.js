// The credentials I gave tools, with Revoke (GET / DELETE /api/credentials/). A
// request for one is answered on its card (requests.js); its secret is never shown.

import { api, ApiError } from "./api.js";
import { clear, empty, failure, h, loading, timeAgo, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

/** The credentials I gave tools, newest first, each with Revoke. */
export async function showCredentials(box) {
  clear(box, loading(gettext("Loading your credentials…")));
  let rows;
  try {
    rows = await api("/api/credentials/");
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      clear(box, empty(gettext("Credentials are not switched on here")));
      return;
    }
    clear(box, failure(error, () => showCredentials(box)));
    return;
  }
  if (!rows.length) {
    clear(box, empty(gettext("No credentials"), gettext("When a tool asks for an API key or a token and you give it, it is kept here until you revoke it.")));
    return;
  }
  clear(box, h("ul", { class: "credential-list", id: "credential-list" }, rows.map((row) => credentialItem(row, box))));
}

function credentialItem(row, box) {
  const revoke = h("button", { type: "button", class: "button small reject", "aria-label": interpolate(gettext("Revoke %(key)s"), { key: row.key }, true) }, gettext("Revoke"));
  const li = h(
    "li",
    { dataset: { credential: String(row.id), key: row.key } },
    h(
      "div",
      { class: "credential-text" },
      h("code", { class: "credential-key" }, row.key),
      h("div", { class: "muted small" }, [row.auth_type, row.tool_name && interpolate(gettext("for %(tool_name)s"), { tool_name: row.tool_name }, true), row.agent && `(${row.agent})`].filter(Boolean).join(" ")),
      h(
        "div",
        { class: "muted small" },
        gettext("given "),
        timeAgo(row.created_at),
        row.last_used_at ? [gettext(" · last used "), timeAgo(row.last_used_at)] : null,
      ),
    ),
    revoke,
  );
  revoke.addEventListener("click", async () => {
    if (!window.confirm(interpolate(gettext("Revoke %(key)s? A tool that needs it will ask again."), { key: row.key }, true))) return;
    revoke.disabled = true;
    try {
      await api(`/api/credentials/${encodeURIComponent(row.id)}/`, { method: "DELETE" });
      toast(interpolate(gettext("Revoked %(key)s."), { key: row.key }, true));
      li.remove();
      if (!box.querySelector("li")) showCredentials(box);
    } catch (error) {
      revoke.disabled = false;
      toast(interpolate(gettext("Not revoked: %(error)s"), { error: error.message }, true), "bad");
      if (error instanceof ApiError && error.status === 404) showCredentials(box);
    }
  });
  return li;
}
