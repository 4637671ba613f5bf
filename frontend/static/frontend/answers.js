// Answering a long-running call (an approval, or any result a person posts):
// quick Approve / Reject, or any JSON object, through
// POST /api/sessions/{id}/function-responses/. The agent resumes on its own.

import { api } from "./api.js";
import { h, toast } from "./dom.js";

/**
 * @param {object} call a LongRunningCall from the API (call_id, name, session, ...)
 * @param {function} onAnswered called with the Run the answer started
 */
export function answerForm(call, onAnswered = () => {}) {
  const me = document.body.dataset.user || "";
  const status = h("span", { class: "muted small", role: "status" });
  const buttons = [];
  const send = async (response) => {
    for (const button of buttons) button.disabled = true;
    status.textContent = "Sending…";
    try {
      const run = await api(`/api/sessions/${encodeURIComponent(call.session)}/function-responses/`, {
        method: "POST",
        body: { call_id: call.call_id, response },
      });
      status.textContent = "Answered: the agent resumes.";
      onAnswered(run, response);
    } catch (error) {
      status.textContent = "";
      toast(`Not answered: ${error.message}`, "bad");
      for (const button of buttons) button.disabled = false;
    }
  };
  const approve = h("button", { type: "button", class: "button small approve", dataset: { answer: "approved" } }, "Approve");
  const reject = h("button", { type: "button", class: "button small reject", dataset: { answer: "rejected" } }, "Reject");
  approve.addEventListener("click", () => send({ status: "approved", approver: me }));
  reject.addEventListener("click", () => send({ status: "rejected", approver: me }));
  const editor = h("textarea", { class: "json-input", rows: "3", "aria-label": `Result of ${call.name} as a JSON object`, spellcheck: "false" }, '{"status": "done"}');
  const custom = h("button", { type: "button", class: "button small" }, "Send result");
  custom.addEventListener("click", () => {
    let value;
    try {
      value = JSON.parse(editor.value);
    } catch (error) {
      toast(`That is not JSON: ${error.message}`, "bad");
      editor.focus();
      return;
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      toast("The result must be a JSON object, e.g. {\"status\": \"done\"}.", "bad");
      return;
    }
    send(value);
  });
  buttons.push(approve, reject, custom);
  return h(
    "div",
    { class: "answer", dataset: { callId: call.call_id } },
    h("div", { class: "answer-buttons" }, approve, reject, status),
    h("details", { class: "answer-custom" }, h("summary", {}, "Answer with any JSON result"), editor, custom),
  );
}

/** Who a call waits for, in words. */
export function waitsFor(call) {
  if (call.answered_by_group) return `Waits for a member of “${call.answered_by_group}”.`;
  return "Waits for the session's owner.";
}
