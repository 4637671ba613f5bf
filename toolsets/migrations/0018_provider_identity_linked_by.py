"""How each provider link was made; the links made by name before are marked for review.

Until this migration a first sign-in linked the existing user whose username equalled
the provider's `preferred_username`: a link to a user who joined before the link was
made was made that way, and may be an account at the provider that only claimed her
name. Those are marked `name`, for staff to review (docs/deployment.md).
"""

from datetime import timedelta

from django.db import migrations, models
from django.db.models import F

# A user the first sign-in created joined in the same transaction as her link.
SAME_SIGN_IN = timedelta(seconds=5)


def mark_links_made_by_name(apps, schema_editor):
    ProviderIdentity = apps.get_model("toolsets", "ProviderIdentity")
    ProviderIdentity.objects.filter(
        user__date_joined__lt=F("created_at") - SAME_SIGN_IN
    ).update(linked_by="name")


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0017_toolcall_started_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="provideridentity",
            name="linked_by",
            field=models.CharField(
                choices=[
                    ("created", "her first sign-in created the user"),
                    ("user", "she linked it herself, signed in"),
                    ("staff", "staff linked it"),
                    ("name", "linked by name, before links by subject only: review"),
                ],
                default="created",
                max_length=8,
            ),
        ),
        migrations.AlterField(
            model_name="provideridentity",
            name="last_sign_in_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(
            mark_links_made_by_name, migrations.RunPython.noop, elidable=True
        ),
    ]
