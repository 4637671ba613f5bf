"""The production path for real: PostgreSQL, Redis, Celery workers and Daphne processes.

Every process is a subprocess on this run's own database, Redis prefix and queue
(tests/integration/services.py). Without PostgreSQL or Redis the suite skips,
saying why; with TOOLCRIB_REQUIRE_SERVICES=1 (CI) that is an error instead.
"""

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass

import pytest
from celery import Celery

from tests.integration import services
from tests.live.server import (
    LiveServer,
    Worker,
    celery_worker,
    daphne,
    free_port,
    prepare_database,
    server_env,
)

# Short leases: a killed worker's turn is found lost within seconds.
LEASE_SECONDS = "2"


@pytest.fixture(scope="session")
def integration_env(tmp_path_factory) -> Iterator[dict[str, str]]:
    """The processes' environment: this run's database, Redis prefix and queue."""
    name = services.run_name()
    with (
        services.postgres_database(name) as database_url,
        services.redis_prefix(name) as redis_url,
    ):
        env = server_env(
            {
                "DATABASE_URL": database_url,
                "REDIS_URL": redis_url,
                "CELERY_BROKER_URL": redis_url,
                "TOOLCRIB_REDIS_PREFIX": name,
                "TOOLCRIB_CELERY_QUEUE": name,
                "TOOLCRIB_RUN_LEASE": LEASE_SECONDS,
                "TOOLCRIB_DATA_DIR": str(tmp_path_factory.mktemp("integration")),
                "TOOLCRIB_EXTRA_AGENTS": (
                    "tests.integration.agents.slow_weather,"
                    "tests.integration.agents.soak_weather,tests.agents.kettle.kettle"
                ),
                "LOG_LEVEL": "INFO",
            }
        )
        prepare_database(env)
        yield env


@dataclass
class Cluster:
    """Two web processes and a worker, sharing PostgreSQL and Redis."""

    webs: list[LiveServer]
    worker: Worker
    env: dict[str, str]


@pytest.fixture(scope="session")
def cluster(integration_env, tmp_path_factory) -> Iterator[Cluster]:
    logs = tmp_path_factory.mktemp("cluster")
    with ExitStack() as stack:
        worker, *webs = services.start_together(
            stack,
            celery_worker(
                integration_env, logs / "worker.log", pool="threads", concurrency=4
            ),
            daphne(integration_env, logs / "daphne-a.log"),
            daphne(integration_env, logs / "daphne-b.log"),
        )
        yield Cluster(webs=webs, worker=worker, env=integration_env)


@pytest.fixture
def send_turn_task(cluster) -> Iterator[Callable[[str], None]]:
    """Queue agents.execute_turn for a run again, as a broker delivering it twice."""
    app = Celery("toolcrib-tests", broker=cluster.env["CELERY_BROKER_URL"])
    app.conf.task_default_queue = cluster.env["TOOLCRIB_CELERY_QUEUE"]
    # As project/settings.py names the Redis broker's keys.
    prefix = cluster.env["TOOLCRIB_REDIS_PREFIX"]
    app.conf.broker_transport_options = {"global_keyprefix": f"{prefix}:celery:"}
    yield lambda run_id: app.send_task("agents.execute_turn", kwargs={"run_id": run_id})
    app.close()


@pytest.fixture(scope="session")
def web_without_broker(integration_env, tmp_path_factory) -> Iterator[LiveServer]:
    """A web process whose broker does not answer (nothing listens on its port)."""
    env = {
        **integration_env,
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{free_port()}/0",
    }
    logs = tmp_path_factory.mktemp("no-broker")
    with daphne(env, logs / "daphne.log") as web:
        yield web
