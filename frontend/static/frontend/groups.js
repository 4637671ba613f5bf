// Groups (staff): create, rename and delete groups, add and remove members, and see
// which groups each user is in. Everything goes through /api/groups/ and /api/users/.

import { api } from "./api.js";
import { badge, clear, debounce, empty, failure, h, loading, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const list = document.getElementById("group-list");
const count = document.getElementById("group-count");
const detail = document.getElementById("group-detail");
const people = document.getElementById("user-list");
const search = document.getElementById("user-search");
const usernames = document.getElementById("usernames");
const USERS_SHOWN = 50;
let groups = [];
let selected = null; // the chosen group's id

async function loadGroups() {
  try {
    groups = await api("/api/groups/");
  } catch (error) {
    clear(list, failure(error, loadGroups));
    return;
  }
  count.textContent = String(groups.length);
  if (selected !== null && !groups.some((group) => group.id === selected)) selected = null;
  clear(list, groups.length ? groups.map(groupItem) : h("li", { class: "muted" }, gettext("No groups yet.")));
  if (selected === null) clear(detail, empty(gettext("No group chosen"), gettext("Pick a group to see and change its members.")));
}

function groupItem(group) {
  return h(
    "li",
    {},
    h(
      "button",
      { type: "button", class: "pick", "aria-current": group.id === selected ? "true" : null, dataset: { group: group.name }, onclick: () => select(group.id) },
      h("span", { class: "pick-name" }, group.name),
      group.managed_by_provider ? badge(gettext("provider"), "live") : null,
      h("span", { class: "count", title: gettext("Members") }, String(group.member_count)),
    ),
  );
}

async function select(id) {
  selected = id;
  clear(list, groups.map(groupItem));
  await loadDetail();
}

async function loadDetail() {
  if (selected === null) return;
  clear(detail, loading(gettext("Loading the group…")));
  try {
    clear(detail, groupDetail(await api(`/api/groups/${selected}/`)));
  } catch (error) {
    clear(detail, failure(error, loadDetail));
  }
}

/** Run a change, say how it went, and show everything afresh. */
async function change(action, done) {
  try {
    await action();
  } catch (error) {
    toast(error.message, "bad");
    return false;
  }
  toast(done, "ok");
  await Promise.all([loadGroups(), loadDetail(), loadPeople()]);
  return true;
}

function groupDetail(group) {
  const name = h("input", { id: "group-name", name: "name", value: group.name, maxlength: 150, required: true, autocomplete: "off" });
  const member = h("input", { id: "member-username", name: "username", list: "usernames", placeholder: gettext("Username"), required: true, autocomplete: "off" });
  member.addEventListener("input", debounce(() => suggest(member.value), 200));
  const path = `/api/groups/${group.id}/`;
  return [
    h("h2", { class: "panel-title", id: "group-title" }, group.name, group.managed_by_provider ? badge(gettext("provider"), "live") : null),
    group.managed_by_provider
      ? h("p", { class: "muted small" }, gettext("The sign-in provider sets this group's members: someone who signs in with it leaves the group again at her next sign-in unless the provider names it for her."))
      : null,
    h(
      "form",
      { class: "inline-form", id: "rename-group", onsubmit: (event) => {
        event.preventDefault();
        change(() => api(path, { method: "PATCH", body: { name: name.value } }), interpolate(gettext("Renamed to %(value)s."), { value: name.value.trim() }, true));
      } },
      h("label", { for: "group-name", class: "visually-hidden" }, gettext("Name")),
      name,
      h("button", { type: "submit", class: "button small" }, gettext("Rename")),
    ),
    h("h3", { class: "label" }, interpolate(gettext("Members (%(members)s)"), { members: group.members.length }, true)),
    group.members.length
      ? h("ul", { class: "members", id: "members" }, group.members.map((user) => memberItem(group, user)))
      : h("p", { class: "muted", id: "members" }, gettext("No members yet.")),
    h(
      "form",
      { class: "inline-form", id: "add-member", onsubmit: (event) => {
        event.preventDefault();
        const username = member.value.trim();
        change(() => api(`${path}members/`, { method: "POST", body: { username } }), interpolate(gettext("%(username)s added to %(name)s."), { username, name: group.name }, true));
      } },
      h("label", { for: "member-username", class: "visually-hidden" }, gettext("Add a member by username")),
      member,
      h("button", { type: "submit", class: "button small" }, gettext("Add member")),
    ),
    h(
      "div",
      { class: "actions danger-zone" },
      h("button", { type: "button", class: "button reject small", id: "delete-group", onclick: () => {
        if (!window.confirm(interpolate(gettext("Delete the group %(name)s? Its grants go with it."), { name: group.name }, true))) return;
        selected = null;
        change(() => api(path, { method: "DELETE" }), interpolate(gettext("%(name)s deleted."), { name: group.name }, true));
      } }, gettext("Delete group")),
    ),
  ];
}

function memberItem(group, user) {
  const path = `/api/groups/${group.id}/members/${encodeURIComponent(user.username)}/`;
  return h(
    "li",
    { dataset: { member: user.username } },
    h("span", {}, user.username),
    h("button", { type: "button", class: "button ghost small", "aria-label": interpolate(gettext("Remove %(username)s from %(name)s"), { username: user.username, name: group.name }, true), onclick: () =>
      change(() => api(path, { method: "DELETE" }), interpolate(gettext("%(username)s left %(name)s."), { username: user.username, name: group.name }, true)) }, gettext("Remove")),
  );
}

async function suggest(text) {
  try {
    const users = await api("/api/users/", { query: { search: text.trim(), limit: 20 } });
    clear(usernames, users.map((user) => h("option", { value: user.username })));
  } catch {
    // Suggestions only: the form still takes any username.
  }
}

async function loadPeople() {
  let users;
  try {
    users = await api("/api/users/", { query: { search: search.value.trim(), limit: USERS_SHOWN } });
  } catch (error) {
    clear(people, failure(error, loadPeople));
    return;
  }
  clear(people, users.length ? users.map(person) : h("li", { class: "muted" }, gettext("Nobody matches.")));
}

function person(user) {
  const byName = new Map(groups.map((group) => [group.name, group.id]));
  return h(
    "li",
    { dataset: { user: user.username } },
    h("div", {}, h("strong", {}, user.username), user.full_name ? h("span", { class: "muted small" }, ` ${user.full_name}`) : null, " ",
      user.is_staff ? badge(gettext("staff")) : null, user.single_sign_on ? badge(gettext("provider"), "live") : null, user.is_active ? null : badge(gettext("inactive"), "bad")),
    h(
      "div",
      { class: "user-groups small" },
      user.groups.length
        ? user.groups.map((name) => h("button", { type: "button", class: "chip", onclick: () => byName.has(name) && select(byName.get(name)) }, name))
        : h("span", { class: "muted" }, gettext("No groups.")),
    ),
  );
}

document.getElementById("new-group").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = document.getElementById("new-group-name");
  const name = input.value.trim();
  let created = null;
  const ok = await change(async () => {
    created = await api("/api/groups/", { method: "POST", body: { name } });
  }, interpolate(gettext("%(name)s created."), { name }, true));
  if (ok) {
    input.value = "";
    await select(created.id);
  }
});
search.addEventListener("input", debounce(loadPeople, 200));

clear(list, loading(gettext("Loading groups…")));
loadGroups().then(loadPeople);
