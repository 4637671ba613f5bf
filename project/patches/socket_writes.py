"""Daphne's socket writes, sent at once when nothing is queued before them.

Twisted, under Daphne, buffers every write to a TCP connection and sends it on a
later pass of the event loop: `transport.write` registers the socket for
writability (a loop handle and an epoll_ctl), the loop's next pass sends the
bytes and unregisters the socket (another epoll_ctl), each step through
Twisted's logging context. asyncio's own transports send at once when nothing
is queued, and wait for writability only with a remainder. For a websocket
frame, Twisted's way was most of what the frame cost the server: an event to 200
subscribers of a session cost 52 µs of CPU a frame, 30 µs sent at once
(bench/README.md, "Socket writes sent at once").

install() gives Twisted's plain TCP connections asyncio's rule. A write with
nothing queued before it, on a connection neither closing nor half-closed, is
sent at once; what the socket does not take, and every write while anything is
queued, goes Twisted's own way: buffered, sent in order when the socket is
writable, a streaming producer paused past the buffer's limit, a lost
connection reported by the loop as before. TLS connections, any error from the
socket, and every other kind of connection (a UNIX socket's, which may pass file
descriptors along with its bytes) take Twisted's way whole.

install() is safe from several threads at once: one installs, under a lock, and
Twisted's own write is what it keeps (tests/project/patches/test_socket_writes_threads.py).

Written for Twisted 26.10 (abstract.FileDescriptor's write state, STATE) under
Daphne 4.2. Off (`TOOLCRIB_PATCHES_OFF=socket_writes`): asgi.py does not install
it; every write goes Twisted's way.
"""

import threading
from collections.abc import Callable

from twisted.internet import abstract, tcp

WRITTEN_FOR = {"twisted": "26.10", "daphne": "4.2"}

# What the rule reads of Twisted's connection (abstract.FileDescriptor): checked
# once at install, so a Twisted that renamed one leaves Twisted's own write.
STATE = (
    "connected",
    "disconnecting",
    "_writeDisconnecting",
    "_writeDisconnected",
    "dataBuffer",
    "offset",
)

# The plain TCP connections, both ends: a subclass (UNIX sockets are one) may
# send its bytes otherwise, and keeps Twisted's write.
PLAIN_TCP = frozenset({tcp.Server, tcp.Client})

_plain: Callable[[tcp.Connection, bytes], None] | None = None
# Installs one at a time: a second thread reading tcp.Connection.write after the
# first replaced it would keep the rule as Twisted's write, and call itself.
_installing = threading.Lock()


def install() -> bool:
    """Send a TCP connection's writes at once when nothing is queued; True if in
    effect (idempotent). Process-wide: Daphne's server calls it as it loads the
    application."""
    global _plain
    if _plain is not None:
        return True
    with _installing:
        if _plain is not None:
            return True
        if not all(hasattr(abstract.FileDescriptor, name) for name in STATE):
            return False
        _plain = tcp.Connection.write
        tcp.Connection.write = write
        return True


def installed() -> bool:
    return _plain is not None


def write(self: tcp.Connection, data: bytes) -> None:
    """Twisted's Connection.write, the bytes sent at once when nothing is queued."""
    if type(data) is bytes and _nothing_queued(self):
        try:
            sent = self.socket.send(data)
        except OSError:  # full, interrupted or lost: Twisted's doWrite tries
            sent = 0  # again, and reports an error that is still there
        if sent == len(data):
            return
        data = data[sent:]
    _plain(self, data)


def _nothing_queued(connection: tcp.Connection) -> bool:
    return (
        type(connection) in PLAIN_TCP
        and not connection.TLS
        and connection.connected
        and not connection.disconnecting
        and not connection._writeDisconnecting
        and not connection._writeDisconnected
        and not getattr(connection, "_tempDataLen", 1)
        and connection.offset == len(connection.dataBuffer)
    )
