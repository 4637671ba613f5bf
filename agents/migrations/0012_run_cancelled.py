"""A Run may end `cancelled`: a person stopped it while queued or running (issue 19).

Choices only: the column keeps its length, and no row changes.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("agents", "0011_oauth2")]

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
                    ("cancelled", "Cancelled"),
                ],
                default="queued",
                max_length=16,
            ),
        ),
    ]
