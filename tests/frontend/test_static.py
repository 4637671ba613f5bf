"""The browser code without a build step: every module a page or a module imports
exists, and templates follow STYLE.md (no inline handlers, `{% extends %}` first)."""

import re
from pathlib import Path

import pytest

FRONTEND = Path(__file__).resolve().parents[2] / "frontend"
STATIC = FRONTEND / "static" / "frontend"
TEMPLATES = FRONTEND / "templates" / "frontend"
MODULES = sorted(STATIC.glob("*.js"))
PAGES = sorted(p for p in TEMPLATES.glob("*.html") if p.name != "base.html")
INCLUDES = sorted((TEMPLATES / "includes").glob("*.html"))  # parts of pages
IMPORT = re.compile(r'^import\s[^;]*?from\s+"(\./[^"]+)";', re.M | re.S)


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_every_relative_import_resolves(module):
    for target in IMPORT.findall(module.read_text()):
        assert (module.parent / target).is_file(), f"{module.name} imports {target}"


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_modules_build_nodes_not_html_strings(module):
    text = module.read_text()

    assert "innerHTML" not in text
    assert "var " not in text


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_modules_log_nothing_to_the_console(module):
    """Nothing a user types (a credential, say) can reach the console by a stray log."""
    assert "console." not in module.read_text()


@pytest.mark.parametrize("template", PAGES, ids=lambda p: p.name)
def test_pages_extend_the_base_first(template):
    assert template.read_text().startswith('{% extends "frontend/base.html" %}')


@pytest.mark.parametrize(
    "template", [*PAGES, *INCLUDES, TEMPLATES / "base.html"], ids=lambda p: p.name
)
def test_templates_attach_no_inline_handlers_or_styles(template):
    text = template.read_text()

    assert not re.search(r"\son[a-z]+=", text)
    assert " style=" not in text


@pytest.mark.parametrize("template", PAGES, ids=lambda p: p.name)
def test_page_modules_exist(template):
    for name in re.findall(r"static 'frontend/([\w.-]+)'", template.read_text()):
        assert (STATIC / name).is_file(), f"{template.name} loads {name}"


def test_notification_permission_is_asked_only_by_the_inbox_button():
    """Never on page load: only askToNotify() asks, and only the inbox's button calls it."""
    askers = [m.name for m in MODULES if "requestPermission(" in m.read_text()]
    call = re.compile(r"(?<!function )\baskToNotify\(\)")
    callers = [m.name for m in MODULES if call.search(m.read_text())]

    assert askers == ["inboxfeed.js"]
    assert callers == ["inbox.js"]
    assert re.search(
        r'notifyButton\.addEventListener\("click", async \(\) => \{[^}]*askToNotify\(\)',
        (STATIC / "inbox.js").read_text(),
    )


def test_one_module_draws_and_answers_requests():
    """The inbox and the session page draw requests with requests.js, not their own."""
    for page in ("inbox.js", "session.js"):
        text = (STATIC / page).read_text()
        assert 'from "./requests.js"' in text
        assert "/answer/" not in text and "/decide/" not in text
    assert not (STATIC / "approvals.js").exists()
    assert not (STATIC / "answers.js").exists()
