"""Daphne's socket writes (project/socket_writes.py), on Twisted's asyncio reactor
as Daphne runs it: a real listening port on loopback and plain socket peers.

The reactor here is an instance of its own on a new event loop, never installed
as the process's: each test drives the loop until what it waits for happened.
"""

import asyncio
import socket
import struct
import time
from collections.abc import Callable, Iterator

import pytest
from twisted.internet import protocol, tcp
from twisted.internet.asyncioreactor import AsyncioSelectorReactor
from twisted.internet.interfaces import IPushProducer
from zope.interface import implementer

from project.patches import socket_writes

TIMEOUT = 10
CHUNK = 256 * 1024


class Server(protocol.Protocol):
    """Records what happens to the server's side of one connection."""

    def __init__(self) -> None:
        self.lost = None

    def connectionLost(self, reason) -> None:
        self.lost = reason


class Harness:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.reactor = AsyncioSelectorReactor(self.loop)
        self.servers: list[Server] = []
        self.ports = []
        self.peers: list[socket.socket] = []

    def listen(self) -> int:
        port = self.reactor.listenTCP(0, factory_of(self), interface="127.0.0.1")
        self.ports.append(port)
        return port.getHost().port

    def connect(self, port: int) -> socket.socket:
        peer = socket.create_connection(("127.0.0.1", port))
        peer.setblocking(False)
        self.peers.append(peer)
        self.until(lambda: len(self.servers) == len(self.peers))
        return peer

    def until(self, done: Callable[[], bool]) -> None:
        async def wait() -> None:
            deadline = time.monotonic() + TIMEOUT
            while not done():
                assert time.monotonic() < deadline, "timed out"
                await asyncio.sleep(0.001)

        self.loop.run_until_complete(wait())

    def read_all(self, peer: socket.socket, size: int) -> bytes:
        """Read `size` bytes from the peer, the reactor running meanwhile."""
        got = bytearray()

        def more() -> bool:
            try:
                while len(got) < size:
                    data = peer.recv(1 << 20)
                    if not data:
                        break
                    got.extend(data)
            except BlockingIOError:
                pass
            return len(got) >= size

        self.until(more)
        return bytes(got)

    def close(self) -> None:
        for peer in self.peers:
            peer.close()
        for port in self.ports:
            port.stopListening()
        for server in self.servers:
            if server.transport is not None and server.lost is None:
                server.transport.abortConnection()
        self.loop.run_until_complete(asyncio.sleep(0.01))
        self.loop.close()


def factory_of(harness: Harness) -> protocol.Factory:
    """Each connection's Server, kept in the harness's list."""

    def build(_address) -> Server:
        server = Server()
        harness.servers.append(server)
        return server

    factory = protocol.Factory()
    factory.buildProtocol = build
    return factory


@pytest.fixture
def harness() -> Iterator[Harness]:
    assert socket_writes.install()
    made = Harness()
    yield made
    made.close()


def chunks(count: int) -> list[bytes]:
    """`count` chunks, each different from the others throughout."""
    return [struct.pack(">I", i) * (CHUNK // 4) for i in range(count)]


def test_install_is_in_effect_once_however_often_called():
    """A second install must not wrap the rule in itself: Twisted's own write is
    what a queued write still goes to."""
    assert socket_writes.install()
    assert socket_writes.install()

    assert socket_writes.installed()
    assert tcp.Connection.write is socket_writes.write
    assert socket_writes._plain is tcp._TLSConnectionMixin.write


def test_a_write_with_nothing_queued_is_on_the_wire_when_write_returns(harness):
    """Twisted's own write waits for the loop's next pass; this one does not."""
    peer = harness.connect(harness.listen())
    transport = harness.servers[0].transport

    transport.write(b"hello")  # the loop does not run from here on

    assert received_now(peer) == b"hello"
    assert transport not in harness.reactor.getWriters()


def received_now(peer: socket.socket) -> bytes | None:
    try:
        return peer.recv(100)
    except BlockingIOError:
        return None


def test_what_a_slow_peer_cannot_take_arrives_whole_and_in_order(harness):
    peer = harness.connect(harness.listen())
    server = harness.servers[0]
    sent = chunks(64)  # 16 MiB, more than loopback's socket buffers hold

    for chunk in sent:
        server.transport.write(chunk)
    queued = server.transport in harness.reactor.getWriters()
    # The peer catches up a little while the loop does not run: the socket has
    # room again, and a write now must still wait behind what is queued.
    early = drain(peer)
    time.sleep(0.01)
    server.transport.write(b"end")

    assert queued, "the socket took everything: nothing was left to queue"
    rest = harness.read_all(peer, len(sent) * CHUNK + 3 - len(early))
    assert early + rest == b"".join(sent) + b"end"
    harness.until(lambda: server.transport not in harness.reactor.getWriters())


def drain(peer: socket.socket) -> bytes:
    """What the peer can read now, without waiting."""
    got = bytearray()
    try:
        while data := peer.recv(1 << 20):
            got.extend(data)
    except BlockingIOError:
        pass
    return bytes(got)


def test_a_unix_socket_connection_keeps_twisted_own_write(harness, tmp_path):
    """A UNIX socket's connection may pass file descriptors with its bytes
    (Twisted's sendmsg): its writes wait for the loop, as Twisted's do."""
    path = str(tmp_path / "socket")
    port = harness.reactor.listenUNIX(path, factory_of(harness))
    harness.ports.append(port)
    peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    peer.connect(path)
    peer.setblocking(False)
    harness.peers.append(peer)
    harness.until(lambda: harness.servers)
    transport = harness.servers[0].transport

    transport.write(b"hello")

    assert received_now(peer) is None
    assert transport in harness.reactor.getWriters()
    assert harness.read_all(peer, 5) == b"hello"


@implementer(IPushProducer)
class Producer:
    def __init__(self) -> None:
        self.paused = 0
        self.resumed = 0

    def pauseProducing(self) -> None:
        self.paused += 1

    def resumeProducing(self) -> None:
        self.resumed += 1

    def stopProducing(self) -> None:
        pass


def test_a_streaming_producer_is_paused_while_the_peer_falls_behind(harness):
    port = harness.listen()
    peer = harness.connect(port)
    server = harness.servers[0]
    producer = Producer()
    server.transport.registerProducer(producer, True)
    sent = chunks(48)

    for chunk in sent:
        server.transport.write(chunk)

    assert producer.paused and not producer.resumed
    assert harness.read_all(peer, len(sent) * CHUNK) == b"".join(sent)
    harness.until(lambda: producer.resumed > 0)


def test_a_write_to_a_peer_that_reset_loses_the_connection_without_raising(harness):
    port = harness.listen()
    peer = harness.connect(port)
    server = harness.servers[0]
    peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    peer.close()  # a reset, not a goodbye
    harness.peers.remove(peer)
    time.sleep(0.05)  # the reset reaches the server's socket; the loop does not run

    server.transport.write(b"too late")
    server.transport.write(b"still too late")

    harness.until(lambda: server.lost is not None)
