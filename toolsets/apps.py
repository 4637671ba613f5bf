from django.apps import AppConfig


class ToolsetsConfig(AppConfig):
    name = "toolsets"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from toolsets import signals

        signals.connect()
