// The REST API, as the signed-in user: JSON in and out, CSRF from the page.

import { gettext, interpolate } from "./i18n.js";

export class ApiError extends Error {
  constructor(status, body) {
    super(describe(status, body));
    this.status = status;
    this.body = body;
  }
}

function describe(status, body) {
  if (body && typeof body === "object") {
    if (body.detail) return String(body.detail);
    const fields = Object.entries(body).map(([key, value]) => `${key}: ${[].concat(value).join(" ")}`);
    if (fields.length) return fields.join("; ");
  }
  if (status === 0) return gettext("The server cannot be reached. Check your connection and try again.");
  if (status >= 500) return interpolate(gettext("The server failed (%(status)s). Try again in a moment."), { status }, true);
  return interpolate(gettext("The server answered %(status)s."), { status }, true);
}

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

export function withQuery(path, query) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query || {})) {
    if (value !== null && value !== undefined && value !== "") params.set(key, value);
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** Call the API with JSON (`body`) or a form (`form`); resolves to the JSON answer. */
export async function api(path, { method = "GET", body, form, query, signal } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET") headers["X-CSRFToken"] = csrfToken();
  let response;
  try {
    response = await fetch(withQuery(path, query), {
      method,
      headers,
      // `form` (a FormData) is sent as multipart; the browser sets its boundary.
      body: form ?? (body === undefined ? undefined : JSON.stringify(body)),
      credentials: "same-origin",
      signal,
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, null);
  }
  if (response.status === 401) {
    window.location.assign(`/login/?next=${encodeURIComponent(window.location.pathname)}`);
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null; // an HTML error page: say the status, not the markup
    }
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

/** Whether an endpoint exists on this server (APIs still being built answer 404). */
export async function available(path) {
  try {
    await api(path);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return false;
    throw error;
  }
}
