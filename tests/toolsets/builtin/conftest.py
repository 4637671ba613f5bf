import pytest

from tests.toolsets.builtin import servers


@pytest.fixture
def web():
    """A loopback HTTP server on 127.0.0.1, stopped after the test."""
    server = servers.serve()
    yield server
    servers.stop(server)
