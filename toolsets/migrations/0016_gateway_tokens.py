# The gateway's personal access tokens (issue 21), and the audit's `cancelled`
# status (issue 19: a stopped run's calls), the one toolsets migration of the chain.
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0015_grant_conditions"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="GatewayToken",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True,
                        primary_key=True,
                        serialize=False,
                        verbose_name="ID",
                    ),
                ),
                (
                    "name",
                    models.CharField(
                        help_text="What the token is for.", max_length=100
                    ),
                ),
                ("digest", models.CharField(max_length=128, unique=True)),
                (
                    "prefix",
                    models.CharField(
                        help_text="The token's first characters.", max_length=16
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("expires_at", models.DateTimeField(blank=True, null=True)),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                (
                    "toolsets",
                    models.ManyToManyField(
                        related_name="gateway_tokens", to="toolsets.toolset"
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="gateway_tokens",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={"ordering": ["-created_at", "-id"]},
        ),
        migrations.AlterField(
            model_name="toolcall",
            name="status",
            field=models.CharField(
                choices=[
                    ("ok", "Ok"),
                    ("error", "Error"),
                    ("denied", "Denied"),
                    ("timeout", "Timeout"),
                    ("invalid_args", "Invalid Args"),
                    ("rate_limited", "Rate Limited"),
                    ("cached", "Cached"),
                    ("gated", "Gated"),
                    ("busy", "Busy"),
                    ("inactive", "Inactive"),
                    ("not_offered", "Not Offered"),
                    ("awaiting_approval", "Awaiting Approval"),
                    ("approved", "Approved"),
                    ("rejected", "Rejected"),
                    ("expired", "Expired"),
                    ("refused", "Refused"),
                    ("cancelled", "Cancelled"),
                ],
                max_length=32,
            ),
        ),
    ]
