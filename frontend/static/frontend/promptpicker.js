// The prompt library in the composer: `/` at the start of an empty box lists the
// prompts I may use (/api/prompts/), narrowed as I type; arrows move, Enter or Tab
// picks, Escape closes. A prompt with {{variables}} asks for each value first; the
// filled text lands in the box, not sent.

import { api } from "./api.js";
import { h } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

const VARIABLE = /\{\{\s*([A-Za-z][A-Za-z0-9_]{0,39})\s*\}\}/g;
const TYPED = /^\/([a-z0-9-]*)$/i;
const SHOWN_MAX = 8;

/** The body with each {{name}} replaced by its value. */
export function fill(body, values) {
  return body.replace(VARIABLE, (match, name) => (name in values ? values[name] : match));
}

export class PromptPicker {
  constructor(form, input) {
    this.form = form;
    this.input = input;
    this.prompts = null; // loaded when `/` is first typed in a box
    this.loading = null;
    this.shown = [];
    this.active = 0;
    this.list = h("ul", {
      id: "prompt-picker",
      class: "prompt-picker",
      role: "listbox",
      "aria-label": gettext("Prompts"),
      hidden: true,
    });
    this.variables = h("form", { class: "prompt-vars", hidden: true });
    // Above the composer, in the page's flow (a form holds no form).
    form.before(this.list, this.variables);
    input.setAttribute("aria-controls", "prompt-picker");
    input.setAttribute("aria-autocomplete", "list");
    input.addEventListener("input", () => this.update());
    // Capture: before the composer's own Enter (send) and the page's Escape (stop).
    input.addEventListener("keydown", (event) => this.key(event), true);
    input.addEventListener("blur", () => setTimeout(() => this.closeList(), 150));
  }

  async load() {
    if (this.prompts) return this.prompts;
    if (!this.loading) {
      this.loading = api("/api/prompts/")
        .then((prompts) => (this.prompts = prompts))
        .catch(() => (this.prompts = null))
        .finally(() => (this.loading = null));
    }
    return this.loading;
  }

  async update() {
    const typed = TYPED.exec(this.input.value);
    if (!typed) {
      this.closeList();
      return;
    }
    if (!this.listOpen()) this.prompts = null; // fresh each time the list opens
    const prompts = (await this.load()) || [];
    const again = TYPED.exec(this.input.value); // typing went on while loading
    if (!again) return;
    const word = again[1].toLowerCase();
    this.shown = prompts
      .filter((p) => p.command.startsWith(word) || p.title.toLowerCase().includes(word))
      .slice(0, SHOWN_MAX);
    this.active = 0;
    this.render(prompts.length === 0);
  }

  render(none) {
    const items = this.shown.map((prompt, index) =>
      h(
        "li",
        {
          id: `prompt-option-${prompt.id}`,
          role: "option",
          class: "prompt-option",
          "aria-selected": index === this.active ? "true" : "false",
          onmousedown: (event) => {
            event.preventDefault(); // keep the box focused
            this.pick(prompt);
          },
        },
        h("span", { class: "prompt-command" }, `/${prompt.command}`),
        h("span", { class: "prompt-title" }, prompt.title),
        prompt.mine
          ? null
          : h("span", { class: "muted small" }, interpolate(gettext("by %(owner)s"), { owner: prompt.owner }, true)),
      ),
    );
    if (!items.length) {
      items.push(
        h(
          "li",
          { class: "prompt-none muted small", role: "presentation" },
          none
            ? gettext("No prompts yet: add some on the Prompts page.")
            : gettext("No prompt matches."),
        ),
      );
    }
    this.list.replaceChildren(...items);
    this.list.hidden = false;
    const current = this.shown[this.active];
    if (current) this.input.setAttribute("aria-activedescendant", `prompt-option-${current.id}`);
    else this.input.removeAttribute("aria-activedescendant");
  }

  listOpen() {
    return !this.list.hidden;
  }

  closeList() {
    this.list.hidden = true;
    this.input.removeAttribute("aria-activedescendant");
  }

  key(event) {
    if (!this.listOpen() || event.isComposing) return;
    const move = { ArrowDown: 1, ArrowUp: -1 }[event.key];
    if (move && this.shown.length) {
      this.active = (this.active + move + this.shown.length) % this.shown.length;
      this.render(false);
    } else if ((event.key === "Enter" || event.key === "Tab") && !event.shiftKey && this.shown.length) {
      this.pick(this.shown[this.active]);
    } else if (event.key === "Escape") {
      this.closeList();
    } else {
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
  }

  pick(prompt) {
    this.closeList();
    if (!prompt.variables.length) {
      this.insert(prompt.body);
      return;
    }
    this.ask(prompt);
  }

  /** A small form: a field per variable, then Insert. */
  ask(prompt) {
    const fields = prompt.variables.map((name, index) =>
      h(
        "label",
        { class: "prompt-var" },
        h("span", {}, name),
        h("input", { name, required: true, autocomplete: "off", "data-index": String(index) }),
      ),
    );
    const cancel = h("button", { type: "button", class: "button ghost small" }, gettext("Cancel"));
    this.variables.replaceChildren(
      h("p", { class: "prompt-vars-title" }, interpolate(gettext("Fill in /%(command)s"), { command: prompt.command }, true)),
      ...fields,
      h(
        "div",
        { class: "prompt-vars-actions" },
        h("button", { type: "submit", class: "button primary small" }, gettext("Insert")),
        cancel,
      ),
    );
    this.variables.hidden = false;
    const done = () => {
      this.variables.hidden = true;
      this.variables.replaceChildren();
      this.input.focus();
    };
    cancel.addEventListener("click", done);
    this.variables.onkeydown = (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        done();
      }
    };
    this.variables.onsubmit = (event) => {
      event.preventDefault();
      event.stopPropagation();
      const values = Object.fromEntries(prompt.variables.map((name) => [name, this.variables.elements[name].value]));
      done();
      this.insert(fill(prompt.body, values));
    };
    this.variables.querySelector("input").focus();
  }

  insert(text) {
    this.input.value = text;
    this.input.dispatchEvent(new Event("input", { bubbles: true }));
    this.input.focus();
    this.input.setSelectionRange(text.length, text.length);
  }
}
