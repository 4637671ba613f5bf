"""docs/architecture.md and its pages per app are the map of the code as it is
(issue 44): every file or folder of the apps they name exists, and a newcomer
reads them without scrolling sideways."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAP = [
    ROOT / "docs" / "architecture.md",
    *sorted((ROOT / "docs" / "architecture").glob("*.md")),
]
APPS = ("project", "agents", "toolsets", "evals", "demo", "frontend")
# `agents/adk/sessions.py`, `toolsets/builtin/`, `frontend/static/frontend/dom.js`
NAMED_PATH = re.compile(r"`((?:" + "|".join(APPS) + r")/[\w./-]*)`")
MAX_LINE = 120


def named_paths(page: Path) -> list[str]:
    return [
        path.rstrip("/")
        for path in NAMED_PATH.findall(page.read_text())
        if "*" not in path and "<" not in path
    ]


def test_the_map_has_a_page_per_app():
    names = {page.name for page in MAP}

    assert {"architecture.md", "agents.md", "toolsets.md", "project.md"} <= names


@pytest.mark.parametrize("page", MAP, ids=lambda page: page.name)
def test_every_path_the_map_names_exists(page):
    missing = [path for path in named_paths(page) if not (ROOT / path).exists()]

    assert missing == []


@pytest.mark.parametrize("page", MAP, ids=lambda page: page.name)
def test_no_line_of_the_map_is_wider_than_a_screen(page):
    wide = [
        number
        for number, line in enumerate(page.read_text().splitlines(), start=1)
        if len(line) > MAX_LINE
    ]

    assert wide == []
