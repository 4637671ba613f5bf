"""The Celery app: turns and long-running tools run here when CELERY_BROKER_URL is set."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

app = Celery("toolcrib")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # every app's tasks.py
# The turn's tasks live with the turns (agents/turns/tasks.py).
app.autodiscover_tasks(["agents.turns"])
