"""Turns: start records a Run, queue orders and claims it, drive runs it, executors
place it (inline or on a Celery worker), tasks are the Celery shells."""
