# Reserved in the migration chain (issue 19); its owner fills in the operations.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("agents", "0014_agent_starters")]

    operations = []
