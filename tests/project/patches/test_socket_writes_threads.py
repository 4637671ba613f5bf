"""project.patches.socket_writes under threads: installing the patch from many threads at
once leaves Twisted's own write as the one a queued write falls back to.

Daphne installs it as it loads the application; any other importer of
project.asgi (a test, a management command) may too, on a thread of its own.
"""

from twisted.internet import tcp

from project.patches import socket_writes
from tests.threads import at_once

ROUNDS = 30
TWISTEDS_OWN = tcp._TLSConnectionMixin.write  # what tcp.Connection inherits


def test_threads_installing_at_once_keep_twisteds_own_write_behind_the_rule(
    monkeypatch,
):
    for _ in range(ROUNDS):
        # As before any install: Twisted's write, and nothing kept.
        monkeypatch.setattr(tcp.Connection, "write", TWISTEDS_OWN)
        monkeypatch.setattr(socket_writes, "_plain", None)

        installed = at_once(lambda i: socket_writes.install())

        assert installed == [True] * 8
        assert tcp.Connection.write is socket_writes.write
        # Never the rule itself: a queued write would call itself for ever.
        assert socket_writes._plain is TWISTEDS_OWN
