from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from channels.layers import get_channel_layer
        from django.conf import settings
        from django.db.models.signals import post_migrate
        from google.adk.agents import LlmAgent

        # Importing registers OfflineLlm for "offline/..." names in ADK's registry.
        from agents.adk import offline  # noqa: F401
        from agents.adk.absent_extras import mark_absent
        from agents.answers import tasks  # noqa: F401

        # Importing registers the requests' sweeps and the notices' sender with
        # Celery, by the names a timer of this process runs them by
        # (agents.timers), worker or not.
        from agents.notices import enqueue as notices
        from agents.notices import tasks as notice_tasks  # noqa: F401
        from agents.redaction import install_log_redaction
        from agents.requests import signals
        from project.sqlite import use_write_ahead_log

        LlmAgent.set_default_model(settings.TOOLCRIB_DEFAULT_MODEL)
        # No log record, whatever handler writes it, shows a secret.
        install_log_redaction()
        # ADK tries its A2A agent every step; without the extra, once is enough.
        mark_absent()
        # A session's pending requests end with it (signals.request_decided).
        signals.connect()
        # A new request's notices are queued as the recorder announces it.
        notices.connect()
        # The embedded default's SQLite file in WAL mode, once it is migrated.
        post_migrate.connect(use_write_ahead_log, dispatch_uid="toolcrib-sqlite-wal")
        # Channels makes the layer on first use, with no lock: threads using it
        # first at once would each make one, and in memory a socket on one hears
        # nothing sent on another. Made now, before any thread serves.
        get_channel_layer()
        # Who changed an agent, a budget or a model connection, and when
        # (agents.changes); a connection's key never shows.
        from agents import changes, model_grants
        from agents.models import (
            AgentSpec,
            Budget,
            ModelConnection,
            ModelGrant,
            ServedModel,
            ShareSettings,
        )

        changes.track(AgentSpec)
        changes.track(Budget)
        changes.track(ModelGrant)
        # Grants saved by hand or deleted with their subject, and memberships,
        # reach every process's kept model grants.
        model_grants.connect()
        changes.track(ModelConnection, exclude_fields=("sealed_key",))
        changes.track(ServedModel)
        # Staff allowing links anyone may open (agents.shares).
        changes.track(ShareSettings)
