# Reserved in the migration chain (issue 22): an agent bounds the history a turn reads.
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("agents", "0016_gateway_requests")]

    operations = [
        migrations.AddField(
            model_name="agentspec",
            name="history",
            field=models.PositiveIntegerField(
                blank=True,
                default=100,
                help_text="How many of a session's latest events a turn reads and the "
                "model is sent, in whole turns (at least the last turn); blank: every "
                "event.",
                null=True,
            ),
        ),
    ]
