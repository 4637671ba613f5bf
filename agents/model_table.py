"""The model connections and prices every process reads: a snapshot per version.

Staff change connections, their models and prices (agents.connections); each
change writes a new stamp in the one ConnectionsVersion row in its transaction. A
reader here reads that stamp (one query) and keeps the snapshot it loaded while
the stamp is unchanged, so a change reaches the next model call and the next
run's cost in every process (Celery workers too) without a restart, and nothing
stays stale. Safe from many threads: a snapshot is immutable and swapped whole,
and one thread at a time loads a new one.

A connection's key is unsealed into the snapshot (it is sent with every call);
it is never logged, and nothing here renders it.
"""

import threading
from dataclasses import dataclass, field
from decimal import Decimal
from uuid import UUID

from agents.models import ConnectionsVersion, ModelConnection, ServedModel
from project.sealing import unseal

SEALING_PURPOSE = "model-connection"
VERSION_ROW = 1

# What each kind of connection is to LiteLLM: the prefix of the model it calls.
LITELLM_PREFIX = {
    ModelConnection.Kind.OPENAI_COMPATIBLE: "openai",
    ModelConnection.Kind.OLLAMA: "ollama_chat",
    ModelConnection.Kind.GEMINI: "gemini",
    ModelConnection.Kind.ANTHROPIC: "anthropic",
}


@dataclass(frozen=True)
class Target:
    """Where a connection's model is called: LiteLLM's provider and model name,
    base, key."""

    connection: str
    provider: str
    litellm_model: str
    api_base: str | None
    api_key: str | None = field(repr=False)


@dataclass(frozen=True)
class Price:
    """A model's prices per million tokens, input and output (None: unpriced)."""

    input: Decimal | None
    output: Decimal | None


@dataclass(frozen=True)
class Snapshot:
    """The connections by name and the prices by model name, as of `stamp`."""

    stamp: object
    connections: dict[str, ModelConnection]
    prices: dict[str, Price]


# Equal to no stamp read (None included): the first read loads.
_UNLOADED = object()
_lock = threading.Lock()
_current = Snapshot(stamp=_UNLOADED, connections={}, prices={})


def read_stamp() -> UUID | None:
    """The version row's stamp; None before any change was made."""
    return (
        ConnectionsVersion.objects.filter(pk=VERSION_ROW)
        .values_list("stamp", flat=True)
        .first()
    )


def snapshot() -> Snapshot:
    """The connections and prices as of now: the kept snapshot while the stamp is
    unchanged (one query), else loaded again."""
    global _current
    stamp = read_stamp()
    kept = _current
    if kept.stamp == stamp:
        return kept
    with _lock:
        if _current.stamp == stamp:  # another thread loaded it meanwhile
            return _current
        fresh = _load(stamp)
        _current = fresh
        return fresh


def forget() -> None:
    """Drop the kept snapshot (tests that empty the tables)."""
    global _current
    with _lock:
        _current = Snapshot(stamp=_UNLOADED, connections={}, prices={})


def _load(stamp: UUID | None) -> Snapshot:
    connections = {c.name: c for c in ModelConnection.objects.all()}
    prices = {
        full_name: Price(input=input_price, output=output_price)
        for full_name, input_price, output_price in ServedModel.objects.values_list(
            "full_name", "input_price", "output_price"
        )
    }
    return Snapshot(stamp=stamp, connections=connections, prices=prices)


def connection_names() -> frozenset[str]:
    """The stored connections' names, as of now."""
    return frozenset(snapshot().connections)


def target_for(name: str) -> Target | None:
    """How to call `name` (`<connection>/<model>`) if its prefix is a stored
    connection, else None (an environment provider's name, or no such connection)."""
    prefix, _, model = name.partition("/")
    if not model:
        return None
    connection = snapshot().connections.get(prefix)
    if connection is None:
        return None
    return target_of(connection, model)


def target_of(connection: ModelConnection, model: str) -> Target:
    """A connection's model as LiteLLM calls it, the key unsealed."""
    prefix = LITELLM_PREFIX.get(connection.kind) or connection.litellm_provider
    key = (
        unseal(SEALING_PURPOSE, connection.sealed_key)
        if connection.sealed_key
        else None
    )
    if key is None and connection.kind == ModelConnection.Kind.OPENAI_COMPATIBLE:
        key = "not-needed"  # the openai SDK sends nothing without a key
    return Target(
        connection=connection.name,
        provider=prefix,
        litellm_model=f"{prefix}/{model}",
        api_base=connection.base_url or None,
        api_key=key,
    )


def price_of(name: str) -> Price | None:
    """A model's prices, by the name agents give it; None when it has none."""
    return snapshot().prices.get(name)


def cost_micros(*, price: Price | None, prompt: int, completion: int) -> int:
    """What tokens cost in millionths of the currency: tokens x price per million."""
    if price is None:
        return 0
    cost = Decimal(prompt) * (price.input or 0) + Decimal(completion) * (
        price.output or 0
    )
    return int(cost.to_integral_value())
