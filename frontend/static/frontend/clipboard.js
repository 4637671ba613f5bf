// Copying text to the clipboard: copyText(text), and copyButton(), a button that
// copies and says "Copied" for a moment.

import { h } from "./dom.js";
import { gettext } from "./i18n.js";

const COPIED_MS = 2000;

/** Put text on the clipboard; resolves true if it got there. */
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // Refused (no permission, page not focused): try the old way below.
    }
  }
  return copyBySelection(text);
}

/** The pre-clipboard-API way, for pages served over plain HTTP to another host. */
function copyBySelection(text) {
  const area = h("textarea", { class: "visually-hidden", readonly: true, "aria-hidden": "true", tabindex: "-1" });
  area.value = text;
  document.body.append(area);
  area.select();
  let copied = false;
  try {
    copied = document.execCommand("copy");
  } finally {
    area.remove();
  }
  return copied;
}

/**
 * A "Copy" button: a click copies `text()` and the button says "Copied" (or "Copy
 * failed") for two seconds.
 * @param {() => string} text what to copy, read at the click.
 * @param {object} options label: the button's accessible name ("Copy code"),
 *   className: extra classes.
 */
export function copyButton(text, { label = gettext("Copy"), className = "" } = {}) {
  const button = h("button", { type: "button", class: `copy-button ${className}`.trim(), "aria-label": label, title: label }, gettext("Copy"));
  let timer = null;
  button.addEventListener("click", async () => {
    const copied = await copyText(text());
    const said = copied ? gettext("Copied") : gettext("Copy failed");
    button.textContent = said;
    button.setAttribute("aria-label", said);
    button.dataset.copied = String(copied);
    clearTimeout(timer);
    timer = setTimeout(() => {
      button.textContent = gettext("Copy");
      button.setAttribute("aria-label", label);
      delete button.dataset.copied;
    }, COPIED_MS);
  });
  return button;
}
