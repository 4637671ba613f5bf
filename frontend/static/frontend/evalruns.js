// Eval runs (docs/eval-runs.md): a set's run history, from
// GET /api/evalsets/{id}/runs/, with a "Compare" action on two picked runs; and
// two runs side by side, from GET /api/evalset-runs/{id}/, case by case: status
// and score changes, the tool calls' diff (added, removed, changed arguments,
// and what the case expected), and the answer's word diff.

import { api } from "./api.js";
import { clear, dateTime, empty, failure, h, inline, loading, statusBadge } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const root = document.getElementById("evalruns");
const body = document.getElementById("evalruns-body");

function score(value) {
  return value === null || value === undefined ? "—" : Number(value).toFixed(2);
}

// The run history of a set, two runs picked to compare.

async function history(setId) {
  clear(body, loading(gettext("Loading runs…")));
  let runs;
  try {
    runs = await api(`/api/evalsets/${setId}/runs/`);
  } catch (error) {
    clear(body, failure(error, () => history(setId)));
    return;
  }
  if (!runs.length) {
    clear(body, empty(gettext("No runs yet"), gettext("Run the set to see its results here.")));
    return;
  }
  const picked = [];
  const compare = h("button", { type: "button", class: "button primary small", id: "compare-runs", disabled: "" }, gettext("Compare"));
  compare.addEventListener("click", () => {
    const [newer, older] = [...picked].sort((a, b) => b - a);
    window.location.href = `/evals/runs/${older}/compare/${newer}/`;
  });
  const rows = runs.map((run) => {
    const box = h("input", { type: "checkbox", "aria-label": interpolate(gettext("Pick run %s"), [run.id]), "data-run": String(run.id) });
    box.addEventListener("change", () => {
      if (box.checked) picked.push(run.id);
      else picked.splice(picked.indexOf(run.id), 1);
      while (picked.length > 2) {
        const dropped = picked.shift();
        body.querySelector(`input[data-run="${dropped}"]`).checked = false;
      }
      compare.disabled = picked.length !== 2;
    });
    const cases = run.totals.cases || {};
    return h(
      "tr",
      { "data-run": String(run.id) },
      h("td", null, box),
      h("td", null, `#${run.id}`),
      h("td", null, statusBadge(run.status)),
      h("td", null, run.agent_name, run.agent_version ? ` v${run.agent_version}` : ""),
      h("td", null, run.model || gettext("agent's")),
      h("td", null, run.as_user),
      h("td", null, score(run.score), " ", run.passed === null ? "" : statusBadge(run.passed ? "passed" : "failed")),
      h("td", null, interpolate(gettext("%(passed)s passed, %(failed)s failed, %(error)s errors"), { passed: cases.passed || 0, failed: cases.failed || 0, error: cases.error || 0 }, true)),
      h("td", null, dateTime(run.created_at)),
    );
  });
  const head = [gettext("Pick"), gettext("Run"), gettext("Status"), gettext("Agent"), gettext("Model"), gettext("As"), gettext("Score"), gettext("Cases"), gettext("Started")];
  clear(
    body,
    h("div", { class: "evalruns-actions" }, compare),
    h("table", { class: "table", id: "run-history" }, h("thead", null, h("tr", null, ...head.map((text) => h("th", { scope: "col" }, text)))), h("tbody", null, ...rows)),
  );
}

// Two runs side by side.

function turnsCalls(turns) {
  return (turns || []).map((turn) => ((turn.intermediate_data || {}).tool_uses || []).map((use) => ({ name: use.name, args: use.args || {} })));
}

function expectedCalls(conversation) {
  return (conversation || []).map((inv) => {
    const data = inv.intermediate_data || {};
    return (data.tool_uses || []).map((use) => ({ name: use.name, args: use.args || {} }));
  });
}

function answers(turns) {
  return (turns || []).map((turn) => ((turn.final_response || {}).parts || []).map((part) => part.text || "").join(""));
}

function sameArgs(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// The calls of B against A: kept, added, removed, or the same tool with changed arguments.
export function callDiff(before, after) {
  const rows = [];
  const left = [...before];
  for (const call of after) {
    const same = left.findIndex((old) => old.name === call.name && sameArgs(old.args, call.args));
    if (same >= 0) {
      left.splice(same, 1);
      rows.push({ kind: "same", call });
      continue;
    }
    const renamed = left.findIndex((old) => old.name === call.name);
    if (renamed >= 0) {
      const [old] = left.splice(renamed, 1);
      rows.push({ kind: "changed", call, old });
      continue;
    }
    rows.push({ kind: "added", call });
  }
  for (const call of left) rows.push({ kind: "removed", call });
  return rows;
}

// A word diff by the longest common subsequence of the two texts' words.
export function wordDiff(before, after) {
  const a = before.split(/\s+/).filter(Boolean);
  const b = after.split(/\s+/).filter(Boolean);
  const table = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const parts = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      parts.push({ kind: "same", word: a[i] });
      i++;
      j++;
    } else if (j < b.length && (i === a.length || table[i][j + 1] >= table[i + 1][j])) {
      parts.push({ kind: "added", word: b[j++] });
    } else {
      parts.push({ kind: "removed", word: a[i++] });
    }
  }
  return parts;
}

function callText(call) {
  return `${call.name}(${inline(call.args, 200)})`;
}

function callsView(beforeTurns, afterTurns, expected) {
  const list = h("ul", { class: "eval-calls" });
  const count = Math.max(beforeTurns.length, afterTurns.length, expected.length);
  for (let index = 0; index < count; index++) {
    for (const row of callDiff(beforeTurns[index] || [], afterTurns[index] || [])) {
      const label = { same: gettext("same"), added: gettext("added"), removed: gettext("removed"), changed: gettext("changed args") }[row.kind];
      const item = h("li", { class: `diff-${row.kind}`, "data-diff": row.kind }, h("span", { class: "diff-label" }, label), " ", callText(row.call));
      if (row.kind === "changed") item.append(h("span", { class: "muted" }, " ", interpolate(gettext("was %s"), [inline(row.old.args, 200)])));
      list.append(item);
    }
  }
  const wanted = expected.flat();
  const expectation = h("p", { class: "muted eval-expected" }, gettext("Expected:"), " ", wanted.length ? wanted.map(callText).join(", ") : gettext("no tool calls"));
  return h("div", null, list.childElementCount ? list : h("p", { class: "muted" }, gettext("No tool calls in either run.")), expectation);
}

function answerView(before, after) {
  const text = h("p", { class: "eval-answer" });
  for (const part of wordDiff(before.join("\n"), after.join("\n"))) {
    const tag = part.kind === "added" ? "ins" : part.kind === "removed" ? "del" : "span";
    text.append(h(tag, null, part.word), " ");
  }
  return text;
}

function scoresView(before, after) {
  const names = [...new Set([...Object.keys(before || {}), ...Object.keys(after || {})])];
  return h(
    "ul",
    { class: "eval-scores" },
    ...names.map((name) => {
      const a = (before || {})[name] || {};
      const b = (after || {})[name] || {};
      const show = (metric) => (metric.status === "not_run" ? gettext("not run") : score(metric.score));
      const changed = show(a) !== show(b);
      return h("li", { class: changed ? "changed" : "", "data-metric": name }, h("span", null, name), ": ", show(a), " → ", h("strong", null, show(b)));
    }),
  );
}

function caseCard(eval_id, a, b) {
  const before = a || { status: "—", scores: {}, actual: [], expected: { conversation: [] } };
  const after = b || { status: "—", scores: {}, actual: [], expected: { conversation: [] } };
  const changed = before.status !== after.status;
  return h(
    "section",
    { class: `eval-case${changed ? " changed" : ""}`, "data-case": eval_id },
    h("h2", { class: "panel-title" }, eval_id, " ", statusBadge(before.status), " → ", statusBadge(after.status)),
    after.error ? h("p", { class: "eval-error" }, after.error) : "",
    scoresView(before.scores, after.scores),
    h("h3", null, gettext("Tool calls")),
    callsView(turnsCalls(before.actual), turnsCalls(after.actual), expectedCalls((after.expected || before.expected).conversation)),
    h("h3", null, gettext("Answer")),
    answerView(answers(before.actual), answers(after.actual)),
  );
}

function runHead(run) {
  return h("div", { class: "eval-run-head" }, h("strong", null, `#${run.id}`), " ", statusBadge(run.status), " ", `${run.agent_name}${run.agent_version ? ` v${run.agent_version}` : ""}`, " · ", interpolate(gettext("score %s"), [score(run.score)]));
}

async function compare(aId, bId) {
  clear(body, loading(gettext("Loading runs…")));
  let a;
  let b;
  try {
    [a, b] = await Promise.all([api(`/api/evalset-runs/${aId}/`), api(`/api/evalset-runs/${bId}/`)]);
  } catch (error) {
    clear(body, failure(error, () => compare(aId, bId)));
    return;
  }
  const byId = (run) => new Map(run.results.map((result) => [result.eval_id, result]));
  const left = byId(a);
  const right = byId(b);
  const ids = [...new Set([...left.keys(), ...right.keys()])];
  clear(
    body,
    h("div", { class: "eval-compare-head" }, runHead(a), h("span", { "aria-hidden": "true" }, "→"), runHead(b), h("a", { href: `/evals/sets/${b.eval_set}/runs/` }, gettext("Run history"))),
    ...ids.map((id) => caseCard(id, left.get(id), right.get(id))),
  );
}

if (root.dataset.mode === "compare") compare(root.dataset.a, root.dataset.b);
else history(root.dataset.set);
