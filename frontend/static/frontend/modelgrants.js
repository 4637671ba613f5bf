// Models (staff): who may use which model, over /api/model-grants/. A grant allows
// or denies a model (or a connection's every model, `lab/*`) to a user or a group,
// until an optional expiry; a deny wins over any allow. Errors show by their field.

import { api } from "./api.js";
import { badge, clear, dateTime, failure, h, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const section = document.getElementById("model-grants");
const tbody = document.getElementById("grant-rows");
const count = document.getElementById("grant-count");

async function load() {
  let grants;
  try {
    grants = await api("/api/model-grants/");
  } catch (error) {
    clear(tbody, h("tr", {}, h("td", { colspan: 5 }, failure(error, load))));
    return;
  }
  count.textContent = String(grants.length);
  clear(tbody, grants.length ? grants.map(row) : h("tr", {}, h("td", { colspan: 5, class: "muted" }, gettext("No model grants: every model is open unless a grant denies it."))));
}

function row(grant) {
  const subject = grant.user ? interpolate(gettext("user %(user)s"), { user: grant.user }, true) : interpolate(gettext("group %(group)s"), { group: grant.group }, true);
  const other = grant.effect === "allow" ? "deny" : "allow";
  const flip = async () => {
    try {
      await api(`/api/model-grants/${grant.id}/`, { method: "PATCH", body: { effect: other } });
      toast(interpolate(other === "allow" ? gettext("Grant #%(id)s now allows %(model)s.") : gettext("Grant #%(id)s now denies %(model)s."), { id: grant.id, model: grant.model }, true), "ok");
    } catch (error) {
      toast(error.message, "bad");
    }
    await load();
  };
  const remove = async () => {
    try {
      await api(`/api/model-grants/${grant.id}/`, { method: "DELETE" });
      toast(interpolate(gettext("Grant #%(id)s removed."), { id: grant.id }, true), "ok");
    } catch (error) {
      toast(error.message, "bad");
    }
    await load();
  };
  return h(
    "tr",
    { dataset: { grant: String(grant.id) } },
    h("td", {}, subject),
    h("td", {}, h("code", {}, grant.model)),
    h("td", {}, badge(grant.effect, grant.effect === "allow" ? "ok" : "bad")),
    h("td", {}, grant.expires_at ? `${grant.active ? "until" : "expired"} ${dateTime(grant.expires_at)}` : gettext("never")),
    h(
      "td",
      {},
      h("button", { type: "button", class: "button ghost small", onclick: flip, "aria-label": interpolate(other === "allow" ? gettext("Make grant #%(id)s allow") : gettext("Make grant #%(id)s deny"), { id: grant.id }, true) }, other === "allow" ? gettext("Allow instead") : gettext("Deny instead")),
      h("button", { type: "button", class: "button ghost small danger", onclick: remove, "aria-label": interpolate(gettext("Remove grant #%(id)s"), { id: grant.id }, true) }, gettext("Remove")),
    ),
  );
}

function field(label, input) {
  const error = h("p", { class: "field-error small", id: `${input.id}-error`, role: "alert" });
  input.setAttribute("aria-describedby", error.id);
  return { row: h("div", { class: "field" }, h("label", { for: input.id }, label), input, error), error };
}

function form() {
  const kind = h("select", { id: "grant-subject-kind", name: "subject_kind" }, h("option", { value: "user" }, gettext("User")), h("option", { value: "group" }, gettext("Group")));
  const name = h("input", { id: "grant-subject", name: "subject", autocomplete: "off", required: true, placeholder: gettext("alice, or interns") });
  const model = h("input", { id: "grant-model", name: "model", autocomplete: "off", required: true, placeholder: gettext("openai/gpt-4o-mini, or lab/*") });
  const effect = h("select", { id: "grant-effect", name: "effect" }, h("option", { value: "deny" }, gettext("Deny")), h("option", { value: "allow" }, gettext("Allow")));
  const expires = h("input", { id: "grant-expires", name: "expires_at", type: "datetime-local" });
  const fields = {
    user: field(gettext("Who"), kind),
    subject: field(gettext("Username or group"), name),
    model: field(gettext("Model (as agents name it, or connection/*)"), model),
    effect: field(gettext("Effect"), effect),
    expires_at: field(gettext("Until (optional)"), expires),
  };
  const general = h("p", { class: "field-error", id: "grant-error", role: "alert" });
  const el = h("form", { id: "grant-form", class: "stack" }, ...Object.values(fields).map((f) => f.row), general, h("div", { class: "actions" }, h("button", { type: "submit", class: "button primary small" }, gettext("Add grant"))));
  el.addEventListener("submit", async (event) => {
    event.preventDefault();
    for (const f of Object.values(fields)) f.error.textContent = "";
    general.textContent = "";
    const body = { [kind.value]: name.value.trim(), model: model.value.trim(), effect: effect.value };
    if (expires.value) body.expires_at = new Date(expires.value).toISOString();
    try {
      await api("/api/model-grants/", { method: "POST", body });
      toast(gettext("Grant added."), "ok");
      name.value = "";
      model.value = "";
      expires.value = "";
      await load();
    } catch (error) {
      const errors = error.body && typeof error.body === "object" ? error.body : null;
      if (!errors) {
        general.textContent = error.message;
        return;
      }
      for (const [key, value] of Object.entries(errors)) {
        const text = [].concat(value).join(" ");
        const target = key === "user" || key === "group" ? fields.subject : fields[key];
        if (target) target.error.textContent = text;
        else general.textContent = text;
      }
    }
  });
  return el;
}

if (section) {
  document.getElementById("grant-form-slot").replaceWith(form());
  load();
}
