// The change audit (staff): who changed what, when, field by field, from
// GET /api/changes/, filtered by kind of object, by person and by object, the
// filters kept in the URL; older pages by the list's `next` link.

import { api } from "./api.js";
import { clear, dateTime, empty, failure, h, inline, loading } from "./dom.js";
import { gettext } from "./i18n.js";

const form = document.getElementById("change-filters");
const box = document.getElementById("changes");
const more = document.getElementById("changes-more");
const FIELDS = ["kind", "actor", "object"];
let rows = [];
let next = null;

function fromUrl() {
  const params = new URLSearchParams(window.location.search);
  for (const name of FIELDS) {
    if (!params.has(name)) continue;
    const field = form.elements[name];
    if (field.tagName === "SELECT" && ![...field.options].some((option) => option.value === params.get(name))) {
      field.append(h("option", { value: params.get(name) }, params.get(name)));
    }
    field.value = params.get(name);
  }
}

function query() {
  const values = {};
  for (const name of FIELDS) {
    const value = form.elements[name].value.trim();
    if (value) values[name] = value;
  }
  return values;
}

function keepInUrl(values) {
  const text = new URLSearchParams(values).toString();
  history.replaceState(null, "", text ? `?${text}` : window.location.pathname);
}

async function load({ older = false } = {}) {
  if (!older) {
    clear(box, loading(gettext("Loading changes…")));
    rows = [];
  }
  let page;
  try {
    page = older ? await api(new URL(next).pathname + new URL(next).search) : await api("/api/changes/", { query: query() });
  } catch (error) {
    clear(box, failure(error, () => load({ older })));
    return;
  }
  rows = rows.concat(page.results);
  next = page.next;
  more.hidden = !next;
  clear(box, rows.length ? table(rows) : empty(gettext("No changes"), gettext("Nobody changed anything that matches these filters.")));
}

function table(changes) {
  return h(
    "table",
    { class: "table cards", id: "change-table" },
    h("thead", {}, h("tr", {}, [gettext("When"), gettext("Who"), gettext("What"), gettext("Action"), gettext("Fields")].map((title) => h("th", { scope: "col" }, title)))),
    h("tbody", {}, changes.map(changeRow)),
  );
}

function changeRow(change) {
  return h(
    "tr",
    { dataset: { kind: change.kind, object: change.object_id } },
    h("td", { class: "nowrap" }, dateTime(change.at)),
    h("td", {}, change.actor || h("span", { class: "muted" }, gettext("nobody known"))),
    h("td", {}, h("span", { class: "muted small" }, `${change.kind} `), change.object_repr || change.object_id),
    h("td", {}, change.action),
    h("td", {}, fields(change.changes)),
  );
}

function fields(changes) {
  const entries = Object.entries(changes || {});
  if (!entries.length) return h("span", { class: "muted" }, "—");
  return h(
    "ul",
    { class: "field-changes" },
    entries.map(([name, pair]) => {
      const [before, after] = Array.isArray(pair) ? pair : [null, pair];
      return h("li", {}, h("strong", {}, name), ": ", shown(before), " → ", shown(after));
    }),
  );
}

function shown(value) {
  if (value === null || value === undefined) return h("span", { class: "muted" }, gettext("none"));
  return h("code", {}, inline(value, 80));
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  keepInUrl(query());
  load();
});
form.addEventListener("reset", () => {
  setTimeout(() => {
    keepInUrl({});
    load();
  });
});
more.addEventListener("click", () => load({ older: true }));

fromUrl();
load();
