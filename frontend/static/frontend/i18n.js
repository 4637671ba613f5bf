// The translations of the page's strings (docs/i18n.md). Django's JavaScript
// catalog (base.html loads it before any module) sets globalThis.django; without
// it (a page served alone, a test), every string is its English self.
//
//   import { gettext, ngettext, interpolate } from "./i18n.js";
//   button.textContent = gettext("Stop");
//   interpolate(ngettext("%(n)s session", "%(n)s sessions", n), { n }, true);

const catalog = () => globalThis.django;

export function gettext(text) {
  const django = catalog();
  return django && django.gettext ? django.gettext(text) : text;
}

export function ngettext(singular, plural, count) {
  const django = catalog();
  if (django && django.ngettext) return django.ngettext(singular, plural, count);
  return count === 1 ? singular : plural;
}

export function pgettext(context, text) {
  const django = catalog();
  return django && django.pgettext ? django.pgettext(context, text) : text;
}

// Fills %(name)s (named, with an object) or %s (in order, with an array).
export function interpolate(format, values, named = false) {
  if (named) {
    return format.replace(/%\(([^)]+)\)s/g, (match, name) =>
      name in values ? String(values[name]) : match,
    );
  }
  let index = 0;
  return format.replace(/%s/g, () => String(values[index++]));
}

// Marks a string for the catalog without translating it: for tables a module builds
// as it loads, translated with gettext() where they are read (the catalog may not be
// there yet at import time).
export function gettext_noop(text) {
  return text;
}
