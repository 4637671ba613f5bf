"""The Celery app: turns and long-running tools run here when CELERY_BROKER_URL is set.

RedisTransport is kombu's Redis transport with one client object per channel: kombu's
own builds a redis-py client (hundreds of response callbacks) for every publish and
every ack, a few milliseconds of CPU a turn. settings.py names it for redis:// brokers.
"""

import os
from typing import Any

from celery import Celery
from celery.signals import worker_init, worker_process_shutdown
from django.conf import settings
from kombu.transport import redis as kombu_redis

from project import garbage, metrics

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

app = Celery("toolcrib")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # every app's tasks.py
# The turn's tasks live with the turns (agents/turns/tasks.py), the notices'
# with the notices (agents/notices/tasks.py), the retention job's with it
# (agents/retention/tasks.py, scheduled by Celery beat).
app.autodiscover_tasks(["agents.turns", "agents.notices", "agents.retention"])


@worker_init.connect
def serve_metrics(**_: Any) -> None:
    """The worker's own /metrics, on TOOLCRIB_WORKER_METRICS_PORT when it is set:
    its turns are counted in its process, not the web server's."""
    if settings.TOOLCRIB_WORKER_METRICS_PORT:
        metrics.serve_worker_metrics(port=settings.TOOLCRIB_WORKER_METRICS_PORT)


@worker_init.connect
def tune_garbage_collector(**_: Any) -> None:
    """The worker has imported its tasks (and so the runtime): set the collector up
    (project/garbage.py), before a prefork pool forks its children."""
    garbage.tune()


@worker_process_shutdown.connect
def forget_pool_process(pid: int | None = None, **_: Any) -> None:
    """A prefork child's live gauges end with it (PROMETHEUS_MULTIPROC_DIR)."""
    metrics.mark_process_dead(pid=pid or os.getpid())


class RedisChannel(kombu_redis.Channel):
    """kombu's Redis channel, its synchronous client built once (per pool).

    A redis-py client is safe to share: each command takes a connection from the
    pool. The asynchronous one (BRPOP) stays kombu's own."""

    _shared_client = None

    def _create_client(self, asynchronous: bool = False):
        if asynchronous:
            return super()._create_client(asynchronous=True)
        client = self._shared_client
        if client is None or client.connection_pool is not self.pool:
            client = self._shared_client = super()._create_client()
        return client


class RedisTransport(kombu_redis.Transport):
    """kombu's Redis transport with RedisChannel."""

    Channel = RedisChannel
