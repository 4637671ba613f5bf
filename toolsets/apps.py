from django.apps import AppConfig


class ToolsetsConfig(AppConfig):
    name = "toolsets"
    default_auto_field = "django.db.models.BigAutoField"
