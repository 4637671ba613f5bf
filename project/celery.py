"""The Celery app: turns and long-running tools run here when CELERY_BROKER_URL is set."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

app = Celery("toolcrib")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
