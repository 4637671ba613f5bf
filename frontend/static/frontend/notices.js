// Notices (staff): the delivery log, newest first, a page at a time.

import { api } from "./api.js";
import { clear, dateTime, empty, failure, h, loading, statusBadge } from "./dom.js";
import { gettext } from "./i18n.js";

const LIMIT = 100;
const box = document.getElementById("notices");
const form = document.getElementById("notice-filters");
const more = document.getElementById("more");
let rows = [];

function filters() {
  const found = {};
  for (const [name, value] of new FormData(form)) {
    if (String(value).trim()) found[name] = String(value).trim();
  }
  return found;
}

async function load(before = 0) {
  if (!before) clear(box, loading(gettext("Loading notices…")));
  let page;
  try {
    page = await api("/api/notices/deliveries/", { query: { ...filters(), limit: LIMIT, ...(before ? { before } : {}) } });
  } catch (error) {
    clear(box, failure(error, () => load(before)));
    return;
  }
  rows = before ? [...rows, ...page] : page;
  more.hidden = page.length < LIMIT;
  if (!rows.length) {
    clear(box, empty(gettext("No notices"), gettext("A notice is logged here when a request is mailed or sent to a webhook.")));
    return;
  }
  clear(box, table(rows));
}

function table(deliveries) {
  const titles = [gettext("Queued"), gettext("Request"), gettext("Channel"), gettext("To"), gettext("Status"), gettext("Attempts"), gettext("Last error"), gettext("Next attempt"), gettext("Sent")];
  return h(
    "table",
    { class: "table cards", id: "notices-table" },
    h("thead", {}, h("tr", {}, titles.map((title) => h("th", { scope: "col", class: title === "Attempts" ? "num" : "" }, title)))),
    h("tbody", {}, deliveries.map(row)),
  );
}

function row(delivery) {
  const none = () => h("span", { class: "muted" }, "—");
  return h(
    "tr",
    { dataset: { status: delivery.status } },
    h("td", { class: "nowrap" }, dateTime(delivery.created_at)),
    h("td", {}, `#${delivery.request}`),
    h("td", {}, delivery.channel),
    h("td", {}, delivery.address, delivery.recipient && delivery.channel === "webhook" ? h("div", { class: "muted small" }, delivery.recipient) : null),
    h("td", {}, statusBadge(delivery.status)),
    h("td", { class: "num" }, String(delivery.attempts)),
    h("td", { class: "small" }, delivery.last_error || none()),
    h("td", { class: "nowrap" }, delivery.next_attempt_at ? dateTime(delivery.next_attempt_at) : none()),
    h("td", { class: "nowrap" }, delivery.sent_at ? dateTime(delivery.sent_at) : none()),
  );
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  load();
});
form.addEventListener("reset", () => setTimeout(() => load(), 0));
more.addEventListener("click", () => load(rows[rows.length - 1].id));
load();
