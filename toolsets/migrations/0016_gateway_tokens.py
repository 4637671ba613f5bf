# Reserved in the migration chain (issue 21); its owner fills in the operations.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("toolsets", "0015_grant_conditions")]

    operations = []
