// How each status of the tool-call audit counts, for the Overview and the audit log:
// whether the tool ran, whether it failed, and which group it is drawn and filtered in.
// A call held for approval, refused by governance or served from the cache did not
// run and did not fail; only `error` and `timeout` are failures.

/** The groups, in the order charts stack them and the audit's filter lists them. */
export const GROUPS = [
  { key: "ok", label: "ran: ok", statuses: ["ok"] },
  { key: "error", label: "ran: error", statuses: ["error"] },
  { key: "timeout", label: "ran: timed out", statuses: ["timeout"] },
  { key: "denied", label: "denied by access", statuses: ["denied"] },
  {
    key: "refused",
    label: "refused by a policy or the agent",
    statuses: ["not_offered", "gated", "inactive", "invalid_args", "rate_limited", "busy", "refused"],
  },
  { key: "cached", label: "answered from the cache", statuses: ["cached"] },
  { key: "held", label: "held for approval", statuses: ["awaiting_approval", "approved", "rejected", "expired"] },
];

const GROUP_OF = new Map(GROUPS.flatMap((group) => group.statuses.map((status) => [status, group.key])));
const RAN = new Set(["ok", "error", "timeout"]);
const FAILED = new Set(["error", "timeout"]);

/** The group a status is drawn in; an unknown status counts as refused, never as ran. */
export function groupOf(status) {
  return GROUP_OF.get(status) || "refused";
}

/** Whether the tool ran: ok, error or timeout. */
export function ran(call) {
  return RAN.has(call.status);
}

/** Whether the call failed: it ran and raised, returned an error, or timed out. */
export function failed(call) {
  return FAILED.has(call.status);
}
