"""Stored MCP / OpenAPI import registrations (issue 8).

Schema filled in by the change that owns it (see the docstring); kept in this chain
so parallel work on the toolsets app never makes two leaf migrations."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("toolsets", "0002_approval")]

    operations = []
