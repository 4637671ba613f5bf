// A session's model picker: shown only when the session's agent lets its users
// pick and more than one of its models is granted to this user (GET
// /api/sessions/{id}/models/). A pick is sent at once (PATCH /api/sessions/{id}/
// {"model"}); a refused pick says why next to the picker, and the next turn runs
// on the model picked.

import { api } from "./api.js";
import { clear, h, toast } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

/** Fill `box` with the picker for session `sessionId`, or leave it hidden. */
export async function showModelPicker({ sessionId, box }) {
  const path = `/api/sessions/${encodeURIComponent(sessionId)}/`;
  let models;
  try {
    models = await api(`${path}models/`);
  } catch {
    box.hidden = true; // the session's own page says what went wrong
    return;
  }
  if (!models.picker) {
    box.hidden = true;
    return;
  }
  const current = models.model || "";
  const select = h(
    "select",
    { id: "model-picker-select", name: "model", "aria-describedby": "model-picker-error" },
    ...models.options.map((option) =>
      h("option", { value: option.default ? "" : option.name, selected: (option.default ? "" : option.name) === current ? true : null }, option.default ? interpolate(gettext("%(name)s (the agent's own)"), { name: option.name }, true) : option.name),
    ),
  );
  const error = h("p", { id: "model-picker-error", class: "field-error small", role: "alert" });
  select.addEventListener("change", async () => {
    error.textContent = "";
    try {
      const saved = await api(path, { method: "PATCH", body: { model: select.value } });
      toast(interpolate(gettext("The next turn runs on %(name)s."), { name: saved.model || models.options[0].name }, true), "ok");
    } catch (failure) {
      const body = failure.body && typeof failure.body === "object" ? failure.body : null;
      error.textContent = body && body.model ? [].concat(body.model).join(" ") : failure.message;
    }
  });
  clear(box, h("label", { for: "model-picker-select", class: "small muted" }, gettext("Model")), select, error);
  box.hidden = false;
}
