// A shared session, read-only (agents.shares): the conversation as it was shared,
// drawn by the session page's own timeline from GET /api/shared/<token>/events/,
// no composer, no socket. A signed-in reader may continue it in a new session of
// her own (POST /api/shared/<token>/fork/), which opens that session's page.

import { api } from "./api.js";
import { clear, empty, failure, h, loading, toast } from "./dom.js";
import { History } from "./history.js";
import { gettext, interpolate } from "./i18n.js";
import { Timeline } from "./timeline.js";

const root = document.getElementById("shared-page");
const token = root.dataset.token;
const base = `/api/shared/${encodeURIComponent(token)}/`;
const el = (id) => document.getElementById(id);

const timeline = new Timeline(el("timeline"), el("timeline-scroll"));
const history = new History(timeline, "", { path: `${base}events/` });

async function init() {
  clear(el("timeline-state"), loading(gettext("Loading the conversation…")));
  try {
    const shared = await api(base);
    showHeading(shared);
    timeline.owner = shared.owner;
    const drawn = await history.open();
    clear(el("timeline-state"), drawn ? null : empty(gettext("Nothing was said yet when this was shared.")));
  } catch (error) {
    clear(el("timeline-state"), failure(error));
  }
}

function showHeading(shared) {
  el("session-title").textContent = shared.title || gettext("Shared session");
  document.title = interpolate(gettext("%(session)s · Toolcrib"), { session: shared.title || gettext("Shared session") }, true);
  el("shared-sub").textContent = interpolate(
    gettext("Shared by %(owner)s · %(agent)s · as of %(when)s"),
    { owner: shared.owner, agent: shared.agent, when: new Date(shared.shared_at).toLocaleString() },
    true,
  );
}

const fork = el("fork-session");
if (fork) {
  fork.addEventListener("click", async () => {
    fork.disabled = true;
    try {
      const session = await api(`${base}fork/`, { method: "POST" });
      window.location.assign(`/sessions/${encodeURIComponent(session.id)}/`);
    } catch (error) {
      toast(error.message, "bad");
      fork.disabled = false;
    }
  });
}

init();
