// Tokens: your personal access tokens to the MCP gateway (/mcp). Create one for some
// toolsets (shown once), see them, revoke them: all through /api/gateway/tokens/.

import { api } from "./api.js";
import { copyButton } from "./clipboard.js";
import { ago, clear, empty, failure, h, loading, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const form = document.getElementById("new-token");
const toolsetBox = document.getElementById("token-toolsets");
const shown = document.getElementById("new-token-shown");
const list = document.getElementById("token-list");

document.getElementById("gateway-url").textContent = `${location.origin}/mcp`;

async function loadToolsets() {
  let toolsets;
  try {
    toolsets = await api("/api/toolsets/");
  } catch (error) {
    toolsetBox.append(failure(error, loadToolsets));
    return;
  }
  for (const toolset of toolsets.filter((t) => t.enabled && !t.missing)) {
    toolsetBox.append(
      h("label", {}, h("input", { type: "checkbox", name: "toolsets", value: toolset.name }), toolset.name),
    );
  }
}

async function loadTokens() {
  clear(list, loading());
  let tokens;
  try {
    tokens = await api("/api/gateway/tokens/");
  } catch (error) {
    clear(list, failure(error, loadTokens));
    return;
  }
  if (!tokens.length) {
    clear(list, empty(gettext("No tokens yet"), gettext("Create one above for each MCP client you use.")));
    return;
  }
  const rows = tokens.map((token) =>
    h(
      "tr",
      {},
      h("td", {}, token.name),
      h("td", {}, h("code", {}, `${token.prefix}…`)),
      h("td", {}, token.toolsets.join(", ")),
      h("td", {}, token.expires_at ? ago(token.expires_at) : gettext("never")),
      h("td", {}, token.last_used_at ? ago(token.last_used_at) : gettext("never")),
      h("td", {}, revokeButton(token)),
    ),
  );
  const head = [gettext("Name"), gettext("Token"), gettext("Toolsets"), gettext("Expires"), gettext("Last used"), ""].map((label) => h("th", { scope: "col" }, label));
  clear(list, h("table", { class: "table" }, h("thead", {}, h("tr", {}, ...head)), h("tbody", {}, ...rows)));
}

function revokeButton(token) {
  const button = h("button", { type: "button", class: "button small reject", "aria-label": interpolate(gettext("Revoke %(name)s"), { name: token.name }, true) }, gettext("Revoke"));
  button.addEventListener("click", async () => {
    if (!window.confirm(interpolate(gettext("Revoke \"%(name)s\"? Clients using it stop working at once."), { name: token.name }, true))) return;
    try {
      await api(`/api/gateway/tokens/${token.id}/`, { method: "DELETE" });
      toast(interpolate(gettext("Revoked \"%(name)s\"."), { name: token.name }, true));
    } catch (error) {
      toast(error.message, "bad");
    }
    loadTokens();
  });
  return button;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData(form);
  const body = {
    name: String(data.get("name") || "").trim(),
    toolsets: data.getAll("toolsets").map(String),
    expires_in_days: Number(data.get("expires_in_days")),
  };
  try {
    const made = await api("/api/gateway/tokens/", { method: "POST", body });
    clear(
      shown,
      h(
        "div",
        { class: "state", role: "status" },
        h("strong", {}, gettext("Copy your token now: it is not shown again.")),
        h("p", {}, h("code", { id: "new-token-value" }, made.token), " ", copyButton(made.token)),
      ),
    );
    form.reset();
    loadTokens();
  } catch (error) {
    clear(shown, failure(error));
  }
});

loadToolsets();
loadTokens();
