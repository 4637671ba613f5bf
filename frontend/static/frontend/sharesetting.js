// The team's sharing setting on the People page (staff): whether a session's owner
// may make a link anyone can open without signing in (PATCH /api/share-settings/;
// the change is in the Changes log).

import { api } from "./api.js";
import { toast } from "./dom.js";
import { gettext } from "./i18n.js";

const box = document.getElementById("share-anyone-allowed");

async function init() {
  if (!box) return;
  try {
    const settings = await api("/api/share-settings/");
    box.checked = settings.anyone_with_link;
    box.disabled = false;
  } catch (error) {
    toast(error.message, "bad");
    return;
  }
  box.addEventListener("change", async () => {
    box.disabled = true;
    try {
      const settings = await api("/api/share-settings/", { method: "PATCH", body: { anyone_with_link: box.checked } });
      box.checked = settings.anyone_with_link;
      toast(settings.anyone_with_link ? gettext("Links anyone can open are allowed.") : gettext("Only people signed in can open shared links now."));
    } catch (error) {
      box.checked = !box.checked;
      toast(error.message, "bad");
    } finally {
      box.disabled = false;
    }
  });
}

init();
