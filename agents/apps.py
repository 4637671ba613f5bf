from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings
        from google.adk.agents import LlmAgent

        # Importing registers OfflineLlm for "offline/..." names in ADK's registry.
        from agents.adk import offline  # noqa: F401

        # Importing registers the requests' expiry sweep with Celery, by the name a
        # timer of this process runs it by (agents.turns.timers), worker or not.
        from agents.requests import signals, tasks  # noqa: F401

        LlmAgent.set_default_model(settings.TOOLCRIB_DEFAULT_MODEL)
        # A session's pending requests end with it (signals.request_decided).
        signals.connect()
