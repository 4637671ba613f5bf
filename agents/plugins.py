"""The plugins a turn runs: TOOLCRIB_PLUGINS, in order, new instances every turn.

The runtime never imports governance: it receives its plugins from settings, the
way Django receives MIDDLEWARE and ADK receives App(plugins=...). A plugin may keep
per-turn state on itself, so each turn gets its own instances. A class with a
`for_run(run)` classmethod is built from the turn's Run (BudgetPlugin counts that
run's tokens); any other is called with no arguments.
"""

from django.conf import settings
from django.utils.module_loading import import_string
from google.adk.plugins import BasePlugin

from agents.models import Run


def plugins_for(*, run: Run) -> list[BasePlugin]:
    """A new instance of each plugin in TOOLCRIB_PLUGINS, in order, for one turn."""
    return [_build(import_string(path), run=run) for path in settings.TOOLCRIB_PLUGINS]


def _build(plugin_class: type[BasePlugin], *, run: Run) -> BasePlugin:
    for_run = getattr(plugin_class, "for_run", None)
    if for_run is not None:
        return for_run(run=run)
    return plugin_class()
