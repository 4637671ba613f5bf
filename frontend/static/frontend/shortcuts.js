// The keyboard shortcuts of the pages with the sessions sidebar, and the dialog that
// lists them (`?`, or the sidebar's "Keyboard shortcuts"). Only what works is listed:
// New chat (Ctrl+Shift+O), search the sessions (Ctrl+K, or / when not typing), this
// list (? when not typing); on a session's page, the message box's own keys
// (session.js and turncontrols.js): Enter sends, Shift+Enter starts a line, Escape
// stops the running turn.

import { h } from "./dom.js";
import { gettext } from "./i18n.js";

function everywhere() {
  return [
    [["Ctrl", "Shift", "O"], gettext("Start a new chat")],
    [["Ctrl", "K"], gettext("Search your sessions")],
    [["/"], gettext("Search your sessions (when not typing)")],
    [["?"], gettext("Show these shortcuts (when not typing)")],
    [["Esc"], gettext("Close a menu, this list, or the sessions drawer")],
  ];
}

function inConversation() {
  return [
    [["Enter"], gettext("Send the message")],
    [["Shift", "Enter"], gettext("Start a new line")],
    [["Esc"], gettext("Stop the running turn")],
  ];
}

/** Whether the person is typing: keys then belong to the field. */
function typing(target) {
  if (!(target instanceof Element)) return false;
  return Boolean(target.closest("input, textarea, select, [contenteditable]:not([contenteditable='false'])"));
}

let dialog = null;

function section(title, rows) {
  return [
    h("h3", { class: "shortcuts-heading" }, title),
    h(
      "dl",
      { class: "shortcuts" },
      rows.map(([keys, what]) => [
        h("dt", {}, keys.map((key, at) => [at ? " + " : "", h("kbd", {}, key)])),
        h("dd", {}, what),
      ]),
    ),
  ];
}

/** Open the list of shortcuts (a modal dialog: Esc or Close closes it). */
export function showShortcuts(conversation) {
  if (!dialog) {
    const close = h("button", { type: "button", class: "button small", value: "close" }, gettext("Close"));
    dialog = h(
      "dialog",
      { id: "shortcuts-dialog", class: "shortcuts-dialog", "aria-labelledby": "shortcuts-title" },
      h("h2", { id: "shortcuts-title" }, gettext("Keyboard shortcuts")),
      section(gettext("Everywhere"), everywhere()),
      conversation ? section(gettext("In the message box"), inConversation()) : null,
      h("div", { class: "actions" }, close),
    );
    close.addEventListener("click", () => dialog.close());
    dialog.addEventListener("click", (event) => {
      if (event.target === dialog) dialog.close(); // a click on the backdrop
    });
    document.body.append(dialog);
  }
  if (!dialog.open) dialog.showModal();
  return dialog;
}

/** Listen for the shortcuts: `newChat()` and `focusSearch()` do the work. */
export function bindShortcuts({ conversation, newChat, focusSearch }) {
  const button = document.getElementById("show-shortcuts");
  if (button) button.addEventListener("click", () => showShortcuts(conversation));
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.isComposing || event.altKey) return;
    const ctrl = event.ctrlKey || event.metaKey;
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (ctrl && event.shiftKey && key === "o") {
      event.preventDefault();
      newChat();
    } else if (ctrl && !event.shiftKey && key === "k") {
      event.preventDefault();
      focusSearch();
    } else if (!ctrl && !typing(event.target) && !(dialog && dialog.open)) {
      if (key === "/") {
        event.preventDefault();
        focusSearch();
      } else if (key === "?") {
        event.preventDefault();
        showShortcuts(conversation);
      }
    }
  });
}
