import pytest

from tests.live.server import daphne, prepare_database, server_env


@pytest.fixture(scope="session")
def live_env(tmp_path_factory):
    """Environment of the live processes: their own SQLite file, the slow test agent."""
    folder = tmp_path_factory.mktemp("live")
    env = server_env(
        {
            "DATABASE_URL": f"sqlite:///{folder / 'live.sqlite3'}",
            "TOOLCRIB_DATA_DIR": str(folder),
            "TOOLCRIB_EXTRA_AGENTS": "tests.live.agents.slow_weather",
        }
    )
    prepare_database(env)
    return env


@pytest.fixture(scope="session")
def daphne_server(live_env, tmp_path_factory):
    with daphne(live_env, tmp_path_factory.mktemp("logs") / "daphne.log") as server:
        yield server
