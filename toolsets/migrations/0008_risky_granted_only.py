"""Risky built-in toolsets start granted_only (hardening, issue 14).

Rows that earlier versions created for the sql, http, webpage, files and shell
built-ins were `open` (the shell's only before it started disabled): every user
could call them once an administrator configured them. This switches those rows
from `open` to `granted_only`. Grants stay as they are, so whoever an
administrator allowed keeps access; everyone else needs a grant. An
administrator who really wants one open sets it back (PATCH /api/toolsets/{name}/).

A row is recognised by where its code lives (`origin`, the settings path or the
class path), not by its name, so a local toolset that happens to be called
`files` is left alone. Reversing leaves the rows granted_only: which ones were
open is not known any more, and the safe side is to keep them closed.
"""

from django.db import migrations
from django.db.models import Q

RISKY_MODULES = ("sql", "http", "webpage", "files", "shell")


def restrict_risky_builtins(apps, schema_editor) -> None:
    """Switch the risky built-ins' open rows to granted_only."""
    Toolset = apps.get_model("toolsets", "Toolset")
    origins = Q()
    for module in RISKY_MODULES:
        origins |= Q(origin__startswith=f"toolsets.builtin.{module}.")
    rows = Toolset.objects.filter(origins, source="builtin", default_policy="open")
    names = sorted(rows.values_list("name", flat=True))
    if not names:
        return
    rows.update(default_policy="granted_only")
    # update() sends no signal: drop the access decisions processes cached.
    from toolsets import access  # noqa: PLC0415 - the app's code, only when needed

    access.invalidate()
    print(f"\n  Toolsets now granted only (grants still apply): {', '.join(names)}")


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0007_approval_session"),
    ]

    operations = [
        migrations.RunPython(restrict_risky_builtins, migrations.RunPython.noop),
    ]
