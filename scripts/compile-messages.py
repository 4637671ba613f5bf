#!/usr/bin/env python3
"""Compile the translation catalogs: every locale/<lang>/LC_MESSAGES/*.po (both
domains, `django` and `djangojs`) to its .mo beside it, in Python (polib, pinned
in pyproject.toml): no GNU gettext needed. `make install` runs it, and so does
`make messages`; a .mo newer than its .po is left as it is. The .mo files are
built, never committed (.gitignore). Fuzzy and untranslated entries are left
out, so their English shows. docs/i18n.md.

    .venv/bin/python scripts/compile-messages.py [--force]
"""

import sys
from pathlib import Path

import polib

LOCALE = Path(__file__).resolve().parents[1] / "locale"


def compile_all(*, force: bool = False) -> list[Path]:
    """Compile each catalog whose .mo is missing or older; returns those compiled."""
    compiled = []
    for po_path in sorted(LOCALE.glob("*/LC_MESSAGES/*.po")):
        mo_path = po_path.with_suffix(".mo")
        if (
            not force
            and mo_path.exists()
            and mo_path.stat().st_mtime >= po_path.stat().st_mtime
        ):
            continue
        catalog = polib.pofile(str(po_path), encoding="utf-8")
        partial = mo_path.with_suffix(".mo.partial")
        catalog.save_as_mofile(str(partial))
        partial.replace(mo_path)  # a server never reads half a file
        compiled.append(mo_path)
    return compiled


def main() -> int:
    for path in compile_all(force="--force" in sys.argv[1:]):
        print(f"compiled {path.relative_to(LOCALE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
