// The user menu's pickers (base.html): her theme, applied at once, and her
// language, which reloads the page in it. Both are stored by the API
// (PATCH /api/me/preferences/, agents/preferences.py).
import { api } from "./api.js";
import { $ } from "./dom.js";
import { gettext } from "./i18n.js";
import { applyTheme } from "./theme.js";

const PREFERENCES = "/api/me/preferences/";

function showError(error) {
  const box = $("#pref-error");
  if (!box) return;
  box.textContent = error ? error.message || gettext("Your choice could not be saved.") : "";
  box.hidden = !error;
}

async function save(select, change, after) {
  const before = select.dataset.chosen;
  select.disabled = true;
  try {
    const stored = await api(PREFERENCES, { method: "PATCH", body: change });
    showError(null);
    after(stored);
  } catch (error) {
    select.value = before;
    showError(error);
  } finally {
    select.disabled = false;
  }
}

function start() {
  const theme = $("#pref-theme");
  const language = $("#pref-language");
  if (theme) {
    theme.addEventListener("change", () => {
      applyTheme(theme.value);
      save(theme, { theme: theme.value }, (stored) => {
        theme.dataset.chosen = stored.theme;
        applyTheme(stored.theme);
      });
    });
  }
  if (language) {
    language.addEventListener("change", () => {
      save(language, { language: language.value }, (stored) => {
        language.dataset.chosen = stored.language;
        window.location.reload();
      });
    });
  }
  // Escape closes the menu, as a menu does.
  const menu = $("#user-menu");
  if (menu) {
    menu.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && menu.open) {
        menu.open = false;
        menu.querySelector("summary").focus();
      }
    });
  }
}

start();
