// "Add to eval set" on a session page: the whole session, or one turn (picked by its
// message), becomes a case of a set you may change, or of a new set named inline
// (POST /api/evalsets/{id}/cases/from-session/, docs/evals.md).

import { api } from "./api.js";
import { clear, h, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const page = document.getElementById("session-page");
const slot = document.getElementById("eval-target");
const NEW = "new";
const WHOLE = "whole";
const SHOWN = 60;

function short(text) {
  const line = String(text || "").replace(/\s+/g, " ").trim();
  return line.length > SHOWN ? `${line.slice(0, SHOWN)}…` : line;
}

async function turns(sessionId) {
  const frames = await api(`/api/sessions/${sessionId}/events/`);
  return frames.filter((frame) => frame.event && frame.event.kind === "user_message");
}

function dialogFor(sessionId) {
  const setPick = h("select", { id: "eval-target-set" });
  const newName = h("input", { id: "eval-target-name", maxlength: 200, placeholder: gettext("New set's name"), autocomplete: "off", hidden: true });
  const turnPick = h("select", { id: "eval-target-turn" });
  const done = h("p", { class: "small", role: "status", "aria-live": "polite" });
  const add = h("button", { type: "submit", class: "button primary small" }, gettext("Add"));
  const cancel = h("button", { type: "button", class: "button small" }, gettext("Cancel"));
  const form = h(
    "form",
    { class: "evals-form" },
    h("h2", { class: "panel-title", id: "eval-target-title" }, gettext("Add to eval set")),
    h("label", { for: "eval-target-set" }, gettext("Set")),
    setPick,
    h("label", { for: "eval-target-name", class: "visually-hidden" }, gettext("New set's name")),
    newName,
    h("label", { for: "eval-target-turn" }, gettext("What")),
    turnPick,
    done,
    h("div", { class: "evals-actions" }, add, cancel),
  );
  const dialog = h("dialog", { class: "eval-target-dialog", "aria-labelledby": "eval-target-title" }, form);
  setPick.addEventListener("change", () => {
    newName.hidden = setPick.value !== NEW;
    newName.required = setPick.value === NEW;
  });
  cancel.addEventListener("click", () => dialog.close());
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const setId = setPick.value === NEW ? (await api("/api/evalsets/", { method: "POST", body: { name: newName.value } })).id : Number(setPick.value);
      const body = { session: sessionId };
      if (turnPick.value !== WHOLE) Object.assign(body, { from_seq: Number(turnPick.value), to_seq: Number(turnPick.value) });
      const made = await api(`/api/evalsets/${setId}/cases/from-session/`, { method: "POST", body });
      clear(done, interpolate(gettext("Added as %(id)s. "), { id: made.eval_id }, true), h("a", { href: `/evals/?set=${setId}` }, gettext("Open the set")));
      toast(gettext("Added to the eval set."), "ok");
      await fill();
    } catch (error) {
      clear(done, error.message);
    }
  });

  async function fill() {
    const [sets, messages] = await Promise.all([api("/api/evalsets/"), turns(sessionId)]);
    const chosen = setPick.value;
    clear(
      setPick,
      sets.filter((set) => set.may_edit).map((set) => h("option", { value: String(set.id) }, set.name)),
      h("option", { value: NEW }, gettext("New set…")),
    );
    if (chosen) setPick.value = chosen;
    setPick.dispatchEvent(new Event("change"));
    clear(
      turnPick,
      h("option", { value: WHOLE }, gettext("The whole session")),
      messages.map((frame) => h("option", { value: String(frame.seq) }, interpolate(gettext("The turn: %(text)s"), { text: short(frame.event.text) }, true))),
    );
  }
  return { dialog, fill, done };
}

if (page && slot) {
  const sessionId = page.dataset.session;
  const { dialog, fill, done } = dialogFor(sessionId);
  const open = h("button", { type: "button", class: "button ghost small", id: "add-to-eval-set" }, gettext("Add to eval set"));
  open.addEventListener("click", async () => {
    clear(done);
    try {
      await fill();
    } catch (error) {
      toast(error.message, "bad");
      return;
    }
    dialog.showModal();
  });
  slot.append(open, dialog);
}
