// People (staff): find users a page at a time, invite by a link, create with a
// password, switch off and on, make staff, groups and a daily token budget.
// Everything goes through /api/users/, /api/invites/, /api/groups/ and /api/budgets/.

import { api } from "./api.js";
import { copyButton } from "./clipboard.js";
import { badge, clear, debounce, empty, failure, h, loading, timeAgo, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const PAGE = 50;
const list = document.getElementById("people-list");
const more = document.getElementById("people-more");
const search = document.getElementById("people-search");
const detail = document.getElementById("person-detail");
const invitePanel = document.getElementById("invite-panel");
const createPanel = document.getElementById("create-panel");
const inviteForm = document.getElementById("invite-form");
const createForm = document.getElementById("create-form");
const issued = document.getElementById("invite-issued");
const inviteList = document.getElementById("invite-list");
let groups = []; // every group: [{id, name, managed_by_provider}]
let shown = []; // the users listed so far
let selected = null; // the chosen username

/** Put each field's error next to it (`data-error`); a message with no field goes to non_field_errors. */
function showErrors(form, error) {
  for (const slot of form.querySelectorAll("[data-error]")) slot.textContent = "";
  const body = error && error.body && typeof error.body === "object" ? error.body : {};
  let placed = false;
  for (const [field, messages] of Object.entries(body)) {
    const slot = form.querySelector(`[data-error="${CSS.escape(field)}"]`);
    if (slot && field !== "detail") {
      slot.textContent = [].concat(messages).join(" ");
      placed = true;
    }
  }
  if (!placed && error) {
    const slot = form.querySelector('[data-error="non_field_errors"]');
    if (slot) slot.textContent = error.message;
    else toast(error.message, "bad");
  }
}

function groupChoices(form) {
  const box = form.querySelector(".group-choices");
  clear(
    box,
    h("legend", {}, gettext("Groups")),
    groups.length
      ? groups.map((group) => h("label", {}, h("input", { type: "checkbox", name: "groups", value: group.name }), group.name))
      : h("span", { class: "muted small" }, gettext("No groups yet.")),
  );
}

function formBody(form) {
  const data = new FormData(form);
  const body = {};
  for (const input of form.querySelectorAll("input[name]:not([type=checkbox])")) {
    if (input.value !== "") body[input.name] = input.type === "number" ? Number(input.value) : input.value;
  }
  body.is_staff = data.get("is_staff") === "on";
  body.groups = data.getAll("groups");
  return body;
}

async function loadGroups() {
  try {
    groups = await api("/api/groups/");
  } catch {
    groups = [];
  }
  groupChoices(inviteForm);
  groupChoices(createForm);
}

async function loadPeople({ append = false } = {}) {
  const after = append && shown.length ? shown[shown.length - 1].username : "";
  if (!append) clear(list, loading(gettext("Loading people…")));
  let page;
  try {
    page = await api("/api/users/", { query: { search: search.value.trim(), limit: PAGE, after } });
  } catch (error) {
    clear(list, failure(error, () => loadPeople({ append })));
    return;
  }
  shown = append ? shown.concat(page) : page;
  more.hidden = page.length < PAGE;
  clear(list, shown.length ? shown.map(personItem) : h("li", { class: "muted" }, gettext("Nobody matches.")));
}

function personItem(user) {
  return h(
    "li",
    { dataset: { user: user.username } },
    h(
      "button",
      { type: "button", class: "pick", "aria-current": user.username === selected ? "true" : null, onclick: () => select(user.username) },
      h("span", { class: "pick-name" }, user.username),
      user.full_name ? h("span", { class: "muted small" }, ` ${user.full_name}`) : null,
      user.is_staff ? badge(gettext("staff")) : null,
      user.single_sign_on ? badge(user.source, "live") : null,
      user.is_active ? null : badge(gettext("switched off"), "bad"),
    ),
  );
}

async function select(username) {
  selected = username;
  clear(list, shown.map(personItem));
  await loadDetail();
}

async function loadDetail() {
  if (selected === null) {
    clear(detail, empty(gettext("Nobody chosen"), gettext("Pick someone to see and change her account.")));
    return;
  }
  clear(detail, loading(gettext("Loading…")));
  try {
    const path = `/api/users/${encodeURIComponent(selected)}/`;
    const [user, budgets] = await Promise.all([api(path), api("/api/budgets/")]);
    clear(detail, personDetail(user, budgets.find((budget) => budget.user === user.username) || null));
  } catch (error) {
    clear(detail, failure(error, loadDetail));
  }
}

/** Run a change; say how it went; show the list and the person afresh. */
async function change(action, done, form = null) {
  try {
    await action();
  } catch (error) {
    if (form) showErrors(form, error);
    else toast(error.message, "bad");
    return false;
  }
  toast(done, "ok");
  await Promise.all([loadPeople(), loadDetail()]);
  return true;
}

function personDetail(user, budget) {
  const path = `/api/users/${encodeURIComponent(user.username)}/`;
  const owned = new Set(user.provider_fields);
  return [
    h(
      "h2",
      { class: "panel-title", id: "person-title" },
      user.username,
      " ",
      user.is_staff ? badge(gettext("staff")) : null,
      user.is_active ? badge(gettext("active"), "ok") : badge(gettext("switched off"), "bad"),
    ),
    h(
      "p",
      { class: "muted small", id: "person-source" },
      user.single_sign_on
        ? interpolate(gettext("Signs in with %(source)s: her name and email%(has)s come from there at each sign-in."), { source: user.source, has: owned.has("is_staff") ? gettext(", and whether she is staff,") : "" }, true)
        : gettext("Signs in with a password made here."),
      gettext(" Joined "),
      timeAgo(user.date_joined),
      gettext("; last signed in "),
      user.last_login ? timeAgo(user.last_login) : gettext("never"),
      ".",
    ),
    standing(user, path, owned),
    profile(user, path, owned),
    memberships(user),
    budgetForm(user, budget),
  ];
}

function standing(user, path, owned) {
  const errors = h("form", {}, h("p", { class: "field-error small", "data-error": "is_active", role: "alert" }), h("p", { class: "field-error small", "data-error": "is_staff", role: "alert" }));
  const patch = (body, done) => change(() => api(path, { method: "PATCH", body }), done, errors);
  const active = user.is_active
    ? h("button", { type: "button", class: "button reject small", id: "person-active", onclick: () => {
        if (!window.confirm(interpolate(gettext("Switch %(username)s off? Her sessions, tokens and open pages stop at once."), { username: user.username }, true))) return;
        patch({ is_active: false }, interpolate(gettext("%(username)s is switched off."), { username: user.username }, true));
      } }, gettext("Switch off"))
    : h("button", { type: "button", class: "button small", id: "person-active", onclick: () => patch({ is_active: true }, interpolate(gettext("%(username)s is switched on."), { username: user.username }, true)) }, gettext("Switch on"));
  const staff = h(
    "button",
    { type: "button", class: "button small", id: "person-staff", disabled: owned.has("is_staff"), title: owned.has("is_staff") ? interpolate(gettext("%(source)s decides this"), { source: user.source }, true) : null,
      onclick: () => patch({ is_staff: !user.is_staff }, user.is_staff ? interpolate(gettext("%(username)s is no longer staff."), { username: user.username }, true) : interpolate(gettext("%(username)s is staff now."), { username: user.username }, true)) },
    user.is_staff ? gettext("Remove staff") : gettext("Make staff"),
  );
  return [h("div", { class: "person-actions" }, active, staff), errors];
}

function profile(user, path, owned) {
  const field = (name, label, type = "text") =>
    [
      h("label", {}, label, h("input", { name, type, value: user[name], maxlength: 150, disabled: owned.has(name), title: owned.has(name) ? interpolate(gettext("%(source)s sets this"), { source: user.source }, true) : null, autocomplete: "off" })),
      h("p", { class: "field-error small", "data-error": name, role: "alert" }),
    ];
  const form = h(
    "form",
    { class: "form-grid", id: "person-profile", novalidate: true },
    field("first_name", gettext("First name")),
    field("last_name", gettext("Last name")),
    field("email", gettext("Email"), "email"),
    h("p", { class: "field-error small", "data-error": "non_field_errors", role: "alert" }),
    owned.has("email") ? null : h("div", { class: "actions" }, h("button", { type: "submit", class: "button small" }, gettext("Save"))),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = {};
    for (const input of form.querySelectorAll("input:not([disabled])")) {
      if (input.value !== user[input.name]) body[input.name] = input.value;
    }
    change(() => api(path, { method: "PATCH", body }), interpolate(gettext("%(username)s's details saved."), { username: user.username }, true), form);
  });
  return [h("h3", { class: "label" }, gettext("Details")), form];
}

function memberships(user) {
  const byName = new Map(groups.map((group) => [group.name, group]));
  const others = groups.filter((group) => !user.groups.includes(group.name));
  const pick = h("select", { id: "person-group", "aria-label": gettext("Group to add her to") }, others.map((group) => h("option", { value: group.id }, group.name)));
  const member = (path) => `/api/groups/${path}`;
  return [
    h("h3", { class: "label" }, gettext("Groups")),
    user.groups.length
      ? h("ul", { class: "members", id: "person-groups" }, user.groups.map((name) => {
          const group = byName.get(name);
          const managed = group && group.managed_by_provider;
          return h(
            "li",
            { dataset: { group: name } },
            h("span", {}, name, managed ? badge(gettext("provider"), "live") : null),
            group && !managed
              ? h("button", { type: "button", class: "button ghost small", "aria-label": interpolate(gettext("Take %(username)s out of %(name)s"), { username: user.username, name }, true),
                  onclick: () => change(() => api(member(`${group.id}/members/${encodeURIComponent(user.username)}/`), { method: "DELETE" }), interpolate(gettext("%(username)s left %(name)s."), { username: user.username, name }, true)) }, gettext("Remove"))
              : null,
          );
        }))
      : h("p", { class: "muted", id: "person-groups" }, gettext("In no group.")),
    others.length
      ? h("form", { class: "inline-form", id: "person-add-group", onsubmit: (event) => {
          event.preventDefault();
          const group = groups.find((g) => String(g.id) === pick.value);
          change(() => api(member(`${group.id}/members/`), { method: "POST", body: { username: user.username } }), interpolate(gettext("%(username)s added to %(name)s."), { username: user.username, name: group.name }, true));
        } }, pick, h("button", { type: "submit", class: "button small" }, gettext("Add to group")))
      : null,
  ];
}

function budgetForm(user, budget) {
  const tokens = h("input", { id: "person-budget", name: "daily_tokens", type: "number", min: 1, value: budget ? budget.daily_tokens : "", placeholder: gettext("No budget of her own") });
  const form = h(
    "form",
    { class: "inline-form", id: "person-budget-form", novalidate: true },
    h("label", { for: "person-budget" }, gettext("Daily tokens")),
    tokens,
    h("button", { type: "submit", class: "button small" }, gettext("Save budget")),
    budget
      ? h("button", { type: "button", class: "button ghost small", onclick: () =>
          change(() => api(`/api/budgets/${budget.id}/`, { method: "DELETE" }), interpolate(gettext("%(username)s's budget removed."), { username: user.username }, true)) }, gettext("Remove budget"))
      : null,
    h("p", { class: "field-error small", "data-error": "daily_tokens", role: "alert" }),
    h("p", { class: "field-error small", "data-error": "non_field_errors", role: "alert" }),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { daily_tokens: tokens.value === "" ? null : Number(tokens.value) };
    const save = budget
      ? () => api(`/api/budgets/${budget.id}/`, { method: "PATCH", body })
      : () => api("/api/budgets/", { method: "POST", body: { ...body, user: user.username } });
    change(save, interpolate(gettext("%(username)s's budget saved."), { username: user.username }, true), form);
  });
  const used = budget ? h("p", { class: "muted small" }, interpolate(gettext("%(used_today)s used today, %(remaining_today)s left."), { used_today: budget.used_today, remaining_today: budget.remaining_today }, true)) : null;
  return [h("h3", { class: "label" }, gettext("Budget")), form, used];
}

async function loadInvites() {
  try {
    const invites = await api("/api/invites/");
    clear(inviteList, invites.length ? invites.map(inviteItem) : h("li", { class: "muted" }, gettext("None.")));
  } catch (error) {
    clear(inviteList, failure(error, loadInvites));
  }
}

function inviteItem(invite) {
  const who = invite.email || gettext("a link");
  return h(
    "li",
    { dataset: { invite: String(invite.id) } },
    h("span", {}, who, invite.is_staff ? badge(gettext("staff")) : null, invite.groups.length ? ` (${invite.groups.join(", ")})` : "", gettext(" · expires "), timeAgo(invite.expires_at)),
    h("button", { type: "button", class: "button ghost small", onclick: async () => {
      try {
        await api(`/api/invites/${invite.id}/`, { method: "DELETE" });
        toast(gettext("Invitation withdrawn."), "ok");
      } catch (error) {
        toast(error.message, "bad");
      }
      await loadInvites();
    } }, gettext("Withdraw")),
  );
}

inviteForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  showErrors(inviteForm, null);
  let made;
  try {
    made = await api("/api/invites/", { method: "POST", body: formBody(inviteForm) });
  } catch (error) {
    showErrors(inviteForm, error);
    return;
  }
  const link = h("input", { id: "invite-link", readonly: true, value: made.link, "aria-label": gettext("Invitation link") });
  clear(
    issued,
    h("p", {}, made.mailed ? interpolate(gettext("Mailed to %(email)s. "), { email: made.email }, true) : "", gettext("Copy the link now: it is shown only once, and works once.")),
    h("div", { class: "invite-link" }, link, copyButton(() => made.link, { label: gettext("Copy the link") })),
  );
  inviteForm.reset();
  groupChoices(inviteForm);
  await loadInvites();
});

createForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  showErrors(createForm, null);
  let user;
  try {
    user = await api("/api/users/", { method: "POST", body: formBody(createForm) });
  } catch (error) {
    showErrors(createForm, error);
    return;
  }
  toast(interpolate(gettext("%(username)s created."), { username: user.username }, true), "ok");
  createForm.reset();
  groupChoices(createForm);
  createPanel.hidden = true;
  await select(user.username);
  await loadPeople();
});

document.getElementById("invite-open").addEventListener("click", () => {
  invitePanel.hidden = !invitePanel.hidden;
  createPanel.hidden = true;
  if (!invitePanel.hidden) loadInvites();
});
document.getElementById("create-open").addEventListener("click", () => {
  createPanel.hidden = !createPanel.hidden;
  invitePanel.hidden = true;
});
search.addEventListener("input", debounce(() => loadPeople(), 200));
more.addEventListener("click", () => loadPeople({ append: true }));

loadGroups().then(() => Promise.all([loadPeople(), loadDetail()]));
