// Tool calls that wait for a person's approval (ADK tool confirmation, kept as
// Approval rows): who decides, Approve / Reject through
// POST /api/approvals/{id}/decide/, and the outcome in words.

import { api, ApiError } from "./api.js";
import { dateTime, h, statusBadge, timeAgo, toast } from "./dom.js";

/** Who a pending approval waits for, in words. The API lists only the approvals I
 * may decide, so one without an approver group is of my own session. */
export function waitsForApproval(approval) {
  if (approval.approver_group) return `Waits for a member of “${approval.approver_group}” (never the requester).`;
  return "Waits for you, the session's owner.";
}

/** "expires in 4 min", or null when the approval never expires. */
export function expiry(approval) {
  if (!approval.expires_at) return null;
  return h("span", { class: "expiry" }, "expires ", timeAgo(approval.expires_at));
}

/** A decided approval: its status and who decided, when. */
export function outcome(approval) {
  const when = approval.decided_at ? ` · ${dateTime(approval.decided_at)}` : "";
  const by = approval.decided_by ? `by ${approval.decided_by}` : "";
  const words = {
    approved: `Approved ${by || "by someone"}${when}: the tool ran.`,
    rejected: `Rejected ${by || "by someone"}${when}: the tool never ran.`,
    expired: `Expired unanswered${when}: the agent was told it is rejected.`,
  };
  return h(
    "p",
    { class: "approval-outcome", dataset: { outcome: approval.status } },
    statusBadge(approval.status),
    " ",
    words[approval.status] || approval.status,
  );
}

/** The server's reason for a refused decision, without the field name. */
function reason(error) {
  const body = error instanceof ApiError ? error.body : null;
  if (body && body.approved) return [].concat(body.approved).join(" ");
  return error.message;
}

/**
 * Approve / Reject buttons for a pending approval.
 * @param {object} approval an Approval from the API
 * @param {object} handlers onDecided(run, approved); onRefused(error) when the
 *   server says no for good (already decided or expired, not yours, gone)
 */
export function decideButtons(approval, { onDecided = () => {}, onRefused = () => {} } = {}) {
  const status = h("span", { class: "muted small", role: "status" });
  const label = approval.tool_name || "this call";
  const approve = h("button", { type: "button", class: "button small approve", dataset: { decide: "approve" }, "aria-label": `Approve ${label}` }, "Approve");
  const reject = h("button", { type: "button", class: "button small reject", dataset: { decide: "reject" }, "aria-label": `Reject ${label}` }, "Reject");
  const send = async (approved) => {
    approve.disabled = true;
    reject.disabled = true;
    status.textContent = "Sending…";
    try {
      const run = await api(`/api/approvals/${encodeURIComponent(approval.id)}/decide/`, { method: "POST", body: { approved } });
      status.textContent = approved ? "Approved: the agent resumes." : "Rejected: the agent is told.";
      onDecided(run, approved);
    } catch (error) {
      status.textContent = "";
      toast(`Not decided: ${reason(error)}`, "bad");
      if (error instanceof ApiError && [400, 403, 404].includes(error.status)) {
        onRefused(error);
        return;
      }
      approve.disabled = false;
      reject.disabled = false;
    }
  };
  approve.addEventListener("click", () => send(true));
  reject.addEventListener("click", () => send(false));
  return h("div", { class: "answer-buttons decide", dataset: { approvalId: String(approval.id) } }, approve, reject, status);
}
