from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo agents (settings.TOOLCRIB_AGENTS) and `manage.py demo_setup`.

    Installed only when TOOLCRIB_DEMO is set (`make run` sets it): never in production.
    """

    name = "demo"
