// What a refusal means, in words a person reads: every error code the session
// socket and the inbox socket send (docs/events.md, "Frames you send"), and the
// REST API's statuses. The server's own message is kept where it is already
// written for people (who may answer, how many turns are queued, ...).

import { gettext, gettext_noop, interpolate } from "./i18n.js";

const SERVER_WORDS = new Set([
  "too_many_turns",
  "forbidden",
  "missing_field",
  "unsupported_scheme",
  "cannot_remember",
  "session_busy",
  "refused",
]);

const WORDS = {
  too_big: gettext_noop("Your message is too long to send in one piece. Shorten it, or split it into several messages."),
  bad_json: gettext_noop("Your message could not be read on the way to the server. Try again; if it keeps failing, reload the page."),
  unsupported: gettext_noop("This page asked the server for something it does not do here. Reload the page and try again."),
  bad_request: gettext_noop("The page's connection to this session is wrong. Reload the page."),
  session_closed: gettext_noop("This session is closed: it takes no new messages. Start a new session with the same agent to go on."),
  not_found: gettext_noop("That is gone, or not yours: it may have been answered or removed elsewhere. Reload the page to see it as it is now."),
  unknown_call: gettext_noop("That call is no longer waiting for a result (it was answered, or it ended)."),
  already_answered: gettext_noop("Someone already answered this; the page shows the answer."),
  already_decided: gettext_noop("Someone already decided this; the page shows the decision."),
  expired: gettext_noop("This request expired: nobody answered it in time."),
  run_ended: gettext_noop("That turn had already ended."),
  nothing_running: gettext_noop("Nothing is running in this session to stop."),
};

/** Plain words for a bad_frame's problem: which part of what you sent was refused. */
function badFrame(message) {
  const long = /longer than (\d+) characters/.exec(message || "");
  // The field comes first: "text: …" over REST, "message.text: …" on the socket.
  if (long && /(^|\.)text:/.test(message)) {
    return interpolate(gettext("Your message is too long: at most %(long)s characters. Shorten it, or split it into several messages."), { long: Number(long[1]).toLocaleString() }, true);
  }
  if (/blank/.test(message || "")) return gettext("Your message is empty: type something first.");
  if (/NUL|surrogate/.test(message || "")) {
    return gettext("Your message holds characters that cannot be stored (a NUL or a broken emoji half). Remove them, or paste the text again.");
  }
  return gettext("The server could not take what was sent as it was. Reload the page and try again.");
}

/**
 * The sentence to show for a refused frame's `error` ({code, message}).
 * @param {{code?: string, message?: string}} error
 */
export function refusalText(error) {
  const code = (error && error.code) || "";
  const message = (error && error.message) || "";
  if (code === "bad_frame") return badFrame(message);
  if (SERVER_WORDS.has(code) && message) return message;
  if (WORDS[code]) return gettext(WORDS[code]);
  return message ? interpolate(gettext("The server refused this: %(message)s"), { message }, true) : gettext("The server refused this. Reload the page and try again.");
}

/** The refusal code a REST error stands for, where its status says it. */
export function restCode(error) {
  if (!error || !error.status) return "";
  if (error.status === 409 && /closed/i.test(error.message || "")) return "session_closed";
  if (error.status === 429) return "too_many_turns";
  return "";
}

// A failed turn's title, by its error's code; the server's message below it says
// which budget, model, grant or key (agents/usage.py, agents/adk/providers.py,
// agents/model_grants.py, agents/model_picks.py).
const TURN_ERRORS = {
  BUDGET_EXCEEDED: gettext_noop("Stopped by a budget"),
  MODEL_NOT_GRANTED: gettext_noop("Stopped: the model is not granted to you"),
  MODEL_NOT_OFFERED: gettext_noop("Stopped: the agent no longer offers the model picked"),
  MODEL_NOT_CONFIGURED: gettext_noop("The model is not set up"),
  MODEL_AUTH_FAILED: gettext_noop("The model's provider refused the key"),
  MODEL_TIMEOUT: gettext_noop("The model did not answer in time"),
  MODEL_RATE_LIMITED: gettext_noop("The model's provider is limiting requests"),
  MODEL_PROVIDER_ERROR: gettext_noop("The model's provider failed"),
  MODEL_REQUEST_FAILED: gettext_noop("The model's provider refused the request"),
};

/** The title of a turn's error box: plain words for known codes, else the code. */
export function turnErrorTitle(code) {
  if (!code) return gettext("Error");
  if (TURN_ERRORS[code]) return gettext(TURN_ERRORS[code]);
  return interpolate(gettext("Error: %(code)s"), { code }, true);
}
