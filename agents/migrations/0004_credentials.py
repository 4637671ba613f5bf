"""Per-user encrypted credentials and auth requests (issue 6).

Schema filled in by the change that owns it (see the docstring); kept in this chain
so parallel work on the toolsets app never makes two leaf migrations."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("agents", "0003_budget")]

    operations = []
