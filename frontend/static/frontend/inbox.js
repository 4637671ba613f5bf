// Inbox: long-running tool calls waiting for an answer I may give (approvals for
// my groups, results my own sessions wait for), answerable in place (/api/calls/).

import { answerForm, waitsFor } from "./answers.js";
import { api, ApiError } from "./api.js";
import { clear, empty, failure, h, json, loading, timeAgo, toast } from "./dom.js";

const box = document.getElementById("inbox");
const me = document.body.dataset.user;

async function load() {
  clear(box, loading("Loading what waits on you…"));
  let calls;
  try {
    calls = await api("/api/calls/");
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      clear(box, empty("Long-running calls are not switched on in this Toolcrib yet", "When a tool waits for an approval or a result, it will wait here until someone answers it."));
      return;
    }
    clear(box, failure(error, load));
    return;
  }
  if (!calls.length) {
    clear(box, empty("Nothing is waiting for you", "Approvals and long-running tool calls you may answer show up here."));
    return;
  }
  clear(box, h("ul", { class: "inbox-list", id: "inbox-list" }, calls.map(item)));
}

function item(call) {
  const li = h(
    "li",
    { class: "card request", dataset: { callId: call.call_id } },
    h(
      "header",
      {},
      h("code", { class: "call-name" }, call.name),
      call.answered_by_group ? h("span", { class: "badge wait" }, `for ${call.answered_by_group}`) : h("span", { class: "badge live" }, "your session"),
      h("span", { class: "muted small" }, timeAgo(call.created_at)),
    ),
    h(
      "div",
      { class: "inbox-meta" },
      h("span", {}, `agent ${call.agent || "?"}`),
      h("a", { href: `/sessions/${call.session}/` }, "open the session"),
      h("span", {}, waitsFor(call)),
    ),
    h("pre", { class: "json" }, json(call.args)),
    answerForm(call, () => {
      toast(`Answered ${call.name}${me ? ` as ${me}` : ""}; the agent resumes.`);
      li.remove();
      if (!box.querySelector(".inbox-list li")) load();
    }),
  );
  return li;
}

load();
