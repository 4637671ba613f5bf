// An artifact shown in place, in a dialog: text, Markdown (markdown.js's renderMarkdown),
// images, PDFs (the server's `?inline=1`, a PDF only), and HTML in a sandboxed frame
// (`sandbox=""`: no script, an origin of its own, so it cannot touch this page).
// Anything else offers its download. Opened from the Artifacts panel and from the
// timeline's artifact chips (`bindArtifactChips`).

import { api } from "./api.js";
import { clear, h } from "./dom.js";
import { fileSize } from "./attach.js";
import { gettext, ngettext, interpolate } from "./i18n.js";

const TEXT_LIMIT = 200_000; // characters shown of a text file
const IMAGE = /^image\/(png|jpe?g|gif|webp|avif|bmp|svg\+xml)$/;
const TEXT = /^(text\/|application\/(json|xml|yaml|x-yaml|javascript|x-sh|toml|csv))/;
const BY_EXTENSION = {
  md: "markdown", markdown: "markdown",
  html: "html", htm: "html", xhtml: "html",
  pdf: "pdf",
  png: "image", jpg: "image", jpeg: "image", gif: "image", webp: "image", svg: "image", avif: "image", bmp: "image",
  txt: "text", csv: "text", json: "text", log: "text", py: "text", js: "text", yaml: "text", yml: "text", xml: "text", toml: "text",
};

/** How to show a file: markdown, html, pdf, image, text, or null (download only). */
export function previewKind(filename, mimeType) {
  const type = (mimeType || "").split(";")[0].trim().toLowerCase();
  const extension = filename.includes(".") ? filename.split(".").pop().toLowerCase() : "";
  if (type === "text/markdown" || type === "text/x-markdown") return "markdown";
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (type === "application/pdf") return "pdf";
  if (IMAGE.test(type)) return "image";
  const guessed = BY_EXTENSION[extension] || null;
  // A text type says little of the format: the name tells Markdown and HTML apart.
  if (TEXT.test(type)) return guessed === "markdown" || guessed === "html" ? guessed : "text";
  return !type || type === "application/octet-stream" ? guessed : null;
}

export function artifactUrl(sessionId, filename, version) {
  const base = `/api/sessions/${encodeURIComponent(sessionId)}/artifacts/${encodeURIComponent(filename)}/`;
  return version === undefined || version === null ? base : `${base}?version=${version}`;
}

let dialog = null;
let opener = null;

function ensureDialog() {
  if (dialog) return dialog;
  const title = h("h2", { id: "preview-title", class: "preview-title" });
  const meta = h("p", { class: "muted small", id: "preview-meta" });
  const download = h("a", { class: "button small", id: "preview-download", download: "" }, gettext("Download"));
  const close = h("button", { type: "button", class: "button ghost small", id: "preview-close" }, gettext("Close"));
  const body = h("div", { class: "preview-body", id: "preview-body" });
  dialog = h(
    "dialog",
    { class: "preview", id: "artifact-preview", "aria-labelledby": "preview-title" },
    h("header", { class: "preview-head" }, h("div", {}, title, meta), h("div", { class: "preview-actions" }, download, close)),
    body,
  );
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    clear(body); // stops a PDF or a frame from living on unseen
    if (opener && opener.isConnected) opener.focus();
  });
  document.body.append(dialog);
  return dialog;
}

/**
 * Show one version of a session's artifact (the latest if `version` is null). Its
 * type and size come from the listing when the caller does not know them.
 */
export async function previewArtifact({ sessionId, filename, version = null, mimeType = null, size = null, from = null }) {
  opener = from || document.activeElement;
  const box = ensureDialog();
  let found = { version, mime_type: mimeType, size };
  if (mimeType === null) found = (await versionOf(sessionId, filename, version)) || found;
  const url = artifactUrl(sessionId, filename, found.version ?? version);
  box.querySelector("#preview-title").textContent = `${filename}${found.version !== null && found.version !== undefined ? interpolate(gettext(" · v%(version)s"), { version: found.version }, true) : ""}`;
  box.querySelector("#preview-meta").textContent = [found.mime_type, found.size !== null && found.size !== undefined ? fileSize(found.size) : null].filter(Boolean).join(" · ");
  box.querySelector("#preview-download").href = url;
  const body = box.querySelector("#preview-body");
  const kind = previewKind(filename, found.mime_type);
  body.dataset.kind = kind || "none";
  clear(body, h("p", { class: "muted" }, gettext("Loading…")));
  if (!box.open) box.showModal();
  try {
    clear(body, await render(kind, url, filename));
  } catch (error) {
    clear(body, h("p", { class: "error-box", role: "alert" }, interpolate(gettext("Cannot show %(filename)s: %(error)s"), { filename, error: error.message }, true)));
  }
}

async function versionOf(sessionId, filename, version) {
  try {
    const listing = await api(`/api/sessions/${encodeURIComponent(sessionId)}/artifacts/`);
    const artifact = listing.find((item) => item.filename === filename);
    if (!artifact) return null;
    const wanted = version ?? artifact.latest;
    return artifact.versions.find((item) => item.version === wanted) || null;
  } catch {
    return null; // the preview then goes by the name
  }
}

async function render(kind, url, filename) {
  switch (kind) {
    case "image":
      return h("img", { src: url, alt: filename, class: "preview-image" });
    case "pdf":
      return h("iframe", { src: `${url}${url.includes("?") ? "&" : "?"}inline=1`, title: interpolate(gettext("%(filename)s (PDF)"), { filename }, true), class: "preview-frame" });
    case "html": {
      // sandbox="" (no allow-scripts, no allow-same-origin): scripts never run, and
      // the page is of an opaque origin, with no reach into this one.
      const frame = h("iframe", { sandbox: "", title: interpolate(gettext("%(filename)s (HTML, scripts off)"), { filename }, true), class: "preview-frame", referrerpolicy: "no-referrer" });
      frame.srcdoc = await fetchText(url);
      return [h("p", { class: "muted small" }, gettext("Shown in a sandbox: its scripts do not run, and it cannot reach this page.")), frame];
    }
    case "markdown":
      return renderMarkdownText(await fetchText(url));
    case "text":
      return h("pre", { class: "preview-text" }, await fetchText(url));
    default:
      return h("p", {}, gettext("No preview for this type of file: download it to open it."));
  }
}

async function renderMarkdownText(text) {
  try {
    const { renderMarkdown } = await import("./markdown.js");
    return renderMarkdown(text, { headingShift: 1 });
  } catch {
    return h("pre", { class: "preview-text" }, text); // no Markdown renderer on this server
  }
}

async function fetchText(url) {
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) throw new Error(response.status === 404 ? gettext("it is not there (or not yours).") : interpolate(gettext("the server answered %(status)s."), { status: response.status }, true));
  const text = await response.text();
  return text.length > TEXT_LIMIT ? `${text.slice(0, TEXT_LIMIT)}\n${interpolate(ngettext("… (%(n)s more character: download the file to read them)", "… (%(n)s more characters: download the file to read them)", text.length - TEXT_LIMIT), { n: text.length - TEXT_LIMIT }, true)}` : text;
}

/** Open a preview from an artifact chip of the timeline (its data-artifact, data-version). */
export function bindArtifactChips(list, sessionId) {
  list.addEventListener("click", (event) => {
    const chip = event.target.closest("[data-artifact-chip]");
    if (!chip || !list.contains(chip)) return;
    previewArtifact({ sessionId, filename: chip.dataset.artifactChip, version: Number(chip.dataset.version), from: chip });
  });
}
