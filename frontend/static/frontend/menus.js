// A small menu button (the WAI-ARIA menu button pattern): the button opens a
// role=menu list of items; arrows, Home and End move, Enter or a click chooses,
// Escape closes it and gives focus back to the button, Tab or a click elsewhere
// closes it. Used by the sidebar: each session's actions, New chat's agents.

import { h } from "./dom.js";

let openOne = null; // the menu open now: one at a time

/**
 * Bind `button` to `menu` (an element with role=menu). `items()` gives, each time
 * the menu opens, what it holds: [{label, onSelect, danger, dataset}].
 */
export function bindMenu(button, menu, items) {
  const close = ({ focus = false } = {}) => {
    if (menu.hidden) return;
    menu.hidden = true;
    button.setAttribute("aria-expanded", "false");
    if (openOne && openOne.menu === menu) openOne = null;
    if (focus) button.focus();
  };
  const open = (first = true) => {
    if (openOne && openOne.menu !== menu) openOne.close();
    const entries = items().map((item) => {
      const entry = h(
        "button",
        { type: "button", role: "menuitem", tabindex: "-1", class: `sb-menu-item${item.danger ? " danger" : ""}`, dataset: item.dataset || {} },
        item.label,
      );
      entry.addEventListener("click", () => {
        close();
        item.onSelect(button);
      });
      return entry;
    });
    menu.replaceChildren(...entries);
    menu.hidden = false;
    button.setAttribute("aria-expanded", "true");
    openOne = { menu, close };
    const focus = first ? entries[0] : entries[entries.length - 1];
    if (focus) focus.focus();
  };
  button.addEventListener("click", () => (menu.hidden ? open() : close({ focus: true })));
  button.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      open(event.key === "ArrowDown");
    }
  });
  menu.addEventListener("keydown", (event) => {
    const entries = [...menu.querySelectorAll('[role="menuitem"]')];
    const at = entries.indexOf(document.activeElement);
    const move = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: entries.length - 1 }[event.key];
    if (move !== undefined) {
      event.preventDefault();
      entries[(move + entries.length) % entries.length].focus();
    } else if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      close({ focus: true });
    } else if (event.key === "Tab") {
      close();
    }
  });
  return { open, close };
}

document.addEventListener("click", (event) => {
  if (!openOne) return;
  const { menu } = openOne;
  const owner = menu.parentElement;
  if (owner && owner.contains(event.target)) return;
  openOne.close();
});
