"""An agent's and a message's tool_choice (issue 17): how the first model call of a
turn may use tools."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0009_request_answers"),
    ]

    operations = [
        migrations.AddField(
            model_name="agentspec",
            name="tool_choice",
            field=models.JSONField(
                blank=True,
                help_text='The first model call of each turn: "auto", "none", '
                '"required" or {"mode": "required", "required_function_name": '
                "...}; blank: TOOLCRIB_FORCED_FIRST_TOOL. A message may choose "
                "otherwise.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="run",
            name="tool_choice",
            field=models.JSONField(
                blank=True,
                help_text="The message's tool choice for the first model call, over "
                "the agent's (agents.inputs.ToolChoice, as stored).",
                null=True,
            ),
        ),
    ]
