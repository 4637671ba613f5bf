"""Session ids unique per (app, user) and credentials per app (hardening: ADK scoping).

Sessions: a new column `adk_id`, the id ADK knows a session by, unique per
(app_name, user_id) as in ADK; every existing session keeps its id there too, so
nothing changes for a session that exists.

Credentials: keyed by (owner, app, key), as ADK's credential services key them.
An existing credential goes to the app in which its owner last answered a request
for its key (where the user gave it); the other apps that had been reusing it ask
again. One that no answered request explains (saved by a tool itself) is deleted:
its tool asks the user again.
"""

from django.db import migrations, models
from django.db.models import F, OuterRef, Subquery


def copy_session_ids(apps, schema_editor) -> None:
    Session = apps.get_model("agents", "Session")
    Session.objects.update(adk_id=F("id"))


def credentials_to_their_app(apps, schema_editor) -> None:
    Credential = apps.get_model("agents", "Credential")
    CredentialRequest = apps.get_model("agents", "CredentialRequest")
    answered = CredentialRequest.objects.filter(
        status="answered",
        session__owner=OuterRef("owner"),
        credential_key=OuterRef("key"),
    ).order_by("-answered_at", "-pk")
    Credential.objects.update(
        app_name=Subquery(answered.values("session__app_name")[:1])
    )
    Credential.objects.filter(app_name__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0005_token_digests"),
    ]

    operations = [
        migrations.AddField(
            model_name="session",
            name="adk_id",
            field=models.CharField(
                default="", help_text="The session's id in ADK.", max_length=128
            ),
            preserve_default=False,
        ),
        migrations.RunPython(copy_session_ids, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="session",
            constraint=models.UniqueConstraint(
                fields=("app_name", "user_id", "adk_id"), name="session_unique_adk_id"
            ),
        ),
        # Nullable while the data moves: NULL marks a credential with no app.
        migrations.AddField(
            model_name="credential",
            name="app_name",
            field=models.CharField(
                help_text="The app (agent) the credential was given to.",
                max_length=100,
                null=True,
            ),
        ),
        migrations.RunPython(credentials_to_their_app, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="credential",
            name="app_name",
            field=models.CharField(
                help_text="The app (agent) the credential was given to.",
                max_length=100,
            ),
        ),
        migrations.RemoveConstraint(
            model_name="credential", name="credential_unique_key_per_owner"
        ),
        migrations.AddConstraint(
            model_name="credential",
            constraint=models.UniqueConstraint(
                fields=("owner", "app_name", "key"),
                name="credential_unique_key_per_owner_app",
            ),
        ),
    ]
