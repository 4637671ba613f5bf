"""API tokens stored as digests (hardening: hashed tokens, issue 14).

Before this, DRF's authtoken app kept every API token in clear (`authtoken_token`).
Each of them moves to django-rest-knox's table as knox stores its own: the SHA-512
digest of the whole token and its first 15 characters as the lookup key. A 40-hex
DRF key authenticates there unchanged, so clients keep their tokens: nobody has to
sign in again. Then the clear table is dropped, with the admin's history entries
about those tokens (their id and title were the key itself).

The app `rest_framework.authtoken` is no longer installed (nothing can write a
clear token again), so its table is read with plain SQL when it is there: on a
database made before this change. A fresh database never had it.

Not reversible: the clear keys are gone. Going back leaves the digests in knox's
table and no DRF tokens; users sign in again for new ones.
"""

from django.db import migrations
from knox.crypto import hash_token
from knox.settings import CONSTANTS

OLD_TABLE = "authtoken_token"
OLD_APP = "authtoken"


def move_tokens_to_digests(apps, schema_editor) -> None:
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    AuthToken = apps.get_model("knox", "AuthToken")
    AuthToken.objects.bulk_create(
        [
            AuthToken(
                digest=hash_token(key),
                token_key=key[: CONSTANTS.TOKEN_KEY_LENGTH],
                user_id=user_id,
                expiry=None,
            )
            for key, user_id in _clear_tokens(connection)
        ],
        ignore_conflicts=True,
    )
    if connection.vendor == "sqlite":
        # Zero the freed pages: a copy of the file keeps no trace of the keys.
        schema_editor.execute("PRAGMA secure_delete = ON")
    schema_editor.execute(f"DROP TABLE {connection.ops.quote_name(OLD_TABLE)}")
    _forget_admin_history(apps)


def _clear_tokens(connection) -> list[tuple[str, int]]:
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {quote('key')}, {quote('user_id')} FROM {quote(OLD_TABLE)}"
        )
        return list(cursor.fetchall())


def _forget_admin_history(apps) -> None:
    """Drop the admin log entries and content types of DRF's token models."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    LogEntry = apps.get_model("admin", "LogEntry")
    old_types = ContentType.objects.filter(app_label=OLD_APP)
    LogEntry.objects.filter(content_type__in=old_types).delete()
    old_types.delete()


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0004_credentials"),
        ("knox", "0009_extend_authtoken_field"),
        ("admin", "0003_logentry_add_action_flag_choices"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.RunPython(move_tokens_to_digests, migrations.RunPython.noop),
    ]
