from django.apps import AppConfig


class ToolsetsConfig(AppConfig):
    name = "toolsets"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core import checks

        from toolsets import bindings, signals
        from toolsets.builtin import shell
        from toolsets.governance import decisions

        signals.connect()
        # Who changed a toolset's or a tool's policy, or a grant, and when.
        from agents import changes
        from toolsets.models import Grant, Tool, Toolset

        for model in (Toolset, Tool, Grant):
            changes.track(model)
        # A held call's audit row reads its decision (agents' request_decided).
        decisions.connect()
        # Warns when the shell toolset has no sandbox and will refuse every command.
        checks.register(shell.check_shell_toolset)
        # Warns when a toolset of TOOLCRIB_EXTRA_TOOLSETS fails to import.
        checks.register(bindings.check_toolsets)
