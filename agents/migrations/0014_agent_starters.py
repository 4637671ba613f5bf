# Reserved in the migration chain (issue 19): agents carry conversation starters.
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("agents", "0013_session_titles")]

    operations = [
        migrations.AddField(
            model_name="agentspec",
            name="starters",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="Conversation starters: a few example prompts an empty "
                "session offers as buttons.",
            ),
        ),
    ]
