"""A request without a session: the approval of a call through the MCP gateway,
asked by its caller through a client (agents.models.Request)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0015_event_sender"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="request",
            name="args_digest",
            field=models.CharField(
                blank=True,
                help_text="A keyed digest of the held call's arguments, as sent "
                "(`args` is redacted): the same call made again matches it.",
                max_length=64,
            ),
        ),
        migrations.AddField(
            model_name="request",
            name="caller",
            field=models.ForeignKey(
                blank=True,
                help_text="Who asked, for a request with no session (an MCP gateway "
                "call).",
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="request",
            name="client",
            field=models.CharField(
                blank=True,
                help_text="The MCP client that made the call.",
                max_length=100,
            ),
        ),
        migrations.AddField(
            model_name="request",
            name="resumed_at",
            field=models.DateTimeField(
                blank=True, help_text="When the approved gateway call ran.", null=True
            ),
        ),
        migrations.AlterField(
            model_name="request",
            name="session",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="requests",
                to="agents.session",
            ),
        ),
        migrations.AddIndex(
            model_name="request",
            index=models.Index(
                fields=["caller", "tool_name", "args_digest"],
                name="agents_requ_caller__364ead_idx",
            ),
        ),
        migrations.AddConstraint(
            model_name="request",
            constraint=models.CheckConstraint(
                condition=models.Q(session__isnull=False)
                | models.Q(caller__isnull=False),
                name="request_has_requester",
            ),
        ),
    ]
