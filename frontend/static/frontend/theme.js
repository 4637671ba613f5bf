// The page's theme (docs/i18n.md): <html data-theme="light|dark"> is her choice,
// rendered by the server from her preferences; without it the system's holds
// (prefers-color-scheme). app.css reads the attribute; highlight.js's two
// stylesheets (markdown.js) take their media from here.

/** "light", "dark" or "system". */
export function currentTheme() {
  return document.documentElement.dataset.theme || "system";
}

const SYSTEM_MEDIA = {
  light: "(prefers-color-scheme: light), (prefers-color-scheme: no-preference)",
  dark: "(prefers-color-scheme: dark)",
};

/** The media of a stylesheet for the `scheme` ("light" or "dark") under `theme`. */
export function schemeMedia(scheme, theme = currentTheme()) {
  if (theme === "light" || theme === "dark") return theme === scheme ? "all" : "not all";
  return SYSTEM_MEDIA[scheme];
}

/** Apply `theme` at once: the attribute, the colour-scheme meta, the code themes. */
export function applyTheme(theme) {
  const root = document.documentElement;
  if (theme === "light" || theme === "dark") root.dataset.theme = theme;
  else delete root.dataset.theme;
  const meta = document.querySelector('meta[name="color-scheme"]');
  if (meta) meta.content = theme === "light" || theme === "dark" ? theme : "light dark";
  for (const link of document.querySelectorAll("link[data-markdown-theme]")) {
    link.media = schemeMedia(link.dataset.markdownTheme);
  }
}
