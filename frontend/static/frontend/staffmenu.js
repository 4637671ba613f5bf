// The staff menu (base.html): inline on a wide screen; on a narrow one, a button that
// opens and closes the staff pages' links (aria-expanded), Escape closing it.

const menu = document.querySelector(".staff-menu");
const toggle = menu && menu.querySelector(".staff-toggle");

function setOpen(open, { focus = false } = {}) {
  toggle.setAttribute("aria-expanded", String(open));
  if (!open && focus) toggle.focus();
}

if (toggle) {
  toggle.addEventListener("click", () => setOpen(toggle.getAttribute("aria-expanded") !== "true"));
  menu.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && toggle.getAttribute("aria-expanded") === "true") {
      event.preventDefault();
      setOpen(false, { focus: true });
    }
  });
  document.addEventListener("click", (event) => {
    if (!menu.contains(event.target)) setOpen(false);
  });
  menu.addEventListener("focusout", (event) => {
    if (event.relatedTarget && !menu.contains(event.relatedTarget)) setOpen(false);
  });
}
