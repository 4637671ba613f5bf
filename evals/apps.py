from django.apps import AppConfig


class EvalsConfig(AppConfig):
    name = "evals"
    verbose_name = "Eval sets"
    default_auto_field = "django.db.models.BigAutoField"
