"""A Run that waits for a person (`waiting`, `waiting_for`), and the run that
resumes it (`resumes`): issue 16."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0007_requests"),
    ]

    operations = [
        migrations.AlterField(
            model_name="run",
            name="status",
            field=models.CharField(
                choices=[
                    ("queued", "Queued"),
                    ("running", "Running"),
                    ("succeeded", "Succeeded"),
                    ("failed", "Failed"),
                    ("waiting", "Waiting"),
                ],
                default="queued",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="run",
            name="waiting_for",
            field=models.CharField(
                blank=True,
                choices=[
                    ("approval", "Approval"),
                    ("credential", "Credential"),
                    ("result", "Result"),
                ],
                help_text="What a waiting run waits for; blank unless waiting.",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="run",
            name="resumes",
            field=models.ForeignKey(
                blank=True,
                help_text="The run whose request this run's answer resumes.",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="resumed_by",
                to="agents.run",
            ),
        ),
    ]
