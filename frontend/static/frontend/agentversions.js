// An agent's versions (staff): every save, newest first; compare two, field by field
// with the instruction as a line diff; roll back to one (itself a new version).

import { api } from "./api.js";
import { badge, clear, failure, h, inline, loading, timeAgo, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

/**
 * Show the versions of agent `name` in `box`.
 * @param {HTMLElement} box
 * @param {string} name
 * @param {{changed: Function, close: Function}} done
 */
export async function openVersions(box, name, done) {
  clear(box, loading(gettext("Loading versions…")));
  let versions;
  try {
    versions = await api(`/api/agents/${encodeURIComponent(name)}/versions/`);
  } catch (error) {
    clear(box, failure(error, () => openVersions(box, name, done)));
    return;
  }
  const diffBox = h("div", { id: "version-diff", class: "version-diff", "aria-live": "polite" });
  const rows = versions.map((v) =>
    h(
      "tr",
      { dataset: { version: v.number } },
      h("td", {}, h("input", { type: "checkbox", name: "compare", value: v.number, "aria-label": interpolate(gettext("Compare version %(number)s"), { number: v.number }, true) })),
      h("td", {}, `v${v.number}`),
      h("td", {}, badge(v.status, v.status === "draft" ? "wait" : "ok")),
      h("td", {}, v.author || "—"),
      h("td", {}, timeAgo(v.created_at)),
      h("td", { class: "muted small" }, v.note || ""),
      h("td", {}, v.status === "published" && v.number !== versions[0].number ? h("button", { type: "button", class: "button small", onclick: () => rollback(name, v.number, done) }, gettext("Roll back to this")) : null),
    ),
  );
  const compare = h("button", { type: "button", class: "button", id: "compare-versions" }, gettext("Compare the two ticked"));
  compare.addEventListener("click", () => {
    const ticked = [...box.querySelectorAll('input[name="compare"]:checked')].map((x) => x.value);
    if (ticked.length !== 2) {
      clear(diffBox, h("p", { class: "form-error" }, gettext("Tick two versions to compare.")));
      return;
    }
    showDiff(diffBox, name, ticked[0], ticked[1]);
  });
  clear(
    box,
    h("h2", {}, interpolate(gettext("Versions of %(name)s"), { name }, true)),
    h(
      "table",
      { class: "table", id: "versions" },
      h("thead", {}, h("tr", {}, ["", gettext("Version"), gettext("Status"), gettext("By"), gettext("When"), gettext("Note"), ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows),
    ),
    h("div", { class: "form-actions" }, compare, h("button", { type: "button", class: "button ghost", onclick: done.close }, gettext("Close"))),
    diffBox,
  );
}

async function showDiff(box, name, a, b) {
  clear(box, loading(gettext("Comparing…")));
  let diff;
  try {
    diff = await api(`/api/agents/${encodeURIComponent(name)}/versions/diff/`, { query: { a, b } });
  } catch (error) {
    clear(box, failure(error));
    return;
  }
  const fields = diff.changes.filter((c) => c.field !== "instruction");
  clear(
    box,
    h("h3", {}, interpolate(gettext("v%(a)s → v%(b)s"), { a: diff.a, b: diff.b }, true)),
    diff.changes.length ? null : h("p", { class: "muted" }, gettext("No field differs.")),
    fields.length
      ? h(
          "table",
          { class: "table", id: "diff-fields" },
          h("thead", {}, h("tr", {}, h("th", {}, gettext("Field")), h("th", {}, `v${diff.a}`), h("th", {}, `v${diff.b}`))),
          h("tbody", {}, fields.map((c) => h("tr", { dataset: { field: c.field } }, h("td", {}, c.field), h("td", {}, inline(c.before)), h("td", {}, inline(c.after))))),
        )
      : null,
    diff.instruction_diff.length
      ? [h("div", { class: "label" }, gettext("Instruction")), h("pre", { class: "line-diff", id: "instruction-diff" }, diff.instruction_diff.map(diffLine))]
      : null,
  );
}

function diffLine(line) {
  const tone = line.startsWith("+") && !line.startsWith("+++") ? "added" : line.startsWith("-") && !line.startsWith("---") ? "removed" : "";
  return h("span", { class: `diff-line ${tone}`.trim() }, `${line}\n`);
}

async function rollback(name, number, done) {
  try {
    await api(`/api/agents/${encodeURIComponent(name)}/rollback/`, { method: "POST", body: { version: number } });
  } catch (error) {
    toast(error.message, "bad");
    return;
  }
  toast(interpolate(gettext("Rolled back to v%(number)s: a new version."), { number }, true), "ok");
  done.changed();
}
