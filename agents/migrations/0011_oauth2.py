"""Issue 17: OAuth2 authorization-code flows keep a sign-in's PKCE code verifier."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0010_tool_choice"),
    ]

    operations = [
        migrations.AddField(
            model_name="request",
            name="sealed_verifier",
            field=models.TextField(
                blank=True,
                editable=False,
                help_text="The PKCE code verifier, encrypted.",
            ),
        ),
    ]
