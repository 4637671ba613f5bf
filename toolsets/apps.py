from django.apps import AppConfig


class ToolsetsConfig(AppConfig):
    name = "toolsets"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.contrib.auth.models import Group
        from django.core import checks

        from agents import changes
        from toolsets import bindings, signals
        from toolsets.builtin import shell
        from toolsets.governance import decisions
        from toolsets.models import Grant, Invite, Tool, ToolImport, Toolset

        signals.connect()
        # Who changed a toolset's or a tool's policy, a grant or a tool server, and
        # when; an import's registration is sealed and never logged.
        for model in (Toolset, Tool, Grant):
            changes.track(model)
        changes.track(ToolImport, exclude_fields=("registration", "document"))
        # ... and a user (toolsets/people/): never her password, never a link's token.
        changes.track(get_user_model(), exclude_fields=("password",))
        changes.track(Group)
        changes.track(Invite, exclude_fields=("digest",))
        # A held call's audit row reads its decision (agents' request_decided).
        decisions.connect()
        # Warns when the shell toolset has no sandbox and will refuse every command.
        checks.register(shell.check_shell_toolset)
        # Warns when a toolset of TOOLCRIB_EXTRA_TOOLSETS fails to import.
        checks.register(bindings.check_toolsets)
