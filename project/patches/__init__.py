"""Toolcrib's patches of its frameworks: each module here changes or bypasses what
Django, Channels, channels_redis, Daphne or Twisted do inside, for speed or for an
answer the framework would not give. Nothing else in the project may do so.

Every patch module follows three rules (docs/architecture/project.md):

- **Versions.** Its docstring names the framework versions it was written for, and
  `WRITTEN_FOR` holds them ({distribution: "major.minor"}); the contract tests
  (tests/project/patches/test_contracts.py) fail when an installed version or an
  internal it relies on moves, so a new pin is a decision, not a surprise.
- **Off switch.** `TOOLCRIB_PATCHES_OFF=name,name` (or `all`) puts the framework's
  own path back, to bisect a bug: a backend patch by the settings choosing the
  framework's backend, a runtime one by `is_on(name)` at each call or install.
- **Benefit.** Its measured benefit on a turn is in bench/README.md ("The framework
  patches and what each buys"); one that buys less than 3% of a turn goes.
"""

from django.conf import settings

# The patches, by the name TOOLCRIB_PATCHES_OFF takes: their modules in this package.
NAMES = (
    "cache",  # cache.py: Django's Redis cache, one client a process
    "daphne_input",  # daphne_input.py: Twisted's form parse off, 1009 for big messages
    "memory_layer",  # memory_layer.py: channels' in-memory layer, one-pass group send
    "prepared",  # prepared.py: querysets compiled once (Django's SQL compiler)
    "redis_layer",  # redis_layer.py: a Redis Pub/Sub channel layer (channels_redis)
    "rows",  # rows.py: INSERTs without the ORM's compiler
    "socket_writes",  # socket_writes.py: Twisted's TCP writes sent at once
    "sqlite_pool",  # sqlite_pool/: Django's SQLite backend, connections kept
)


def is_on(name: str) -> bool:
    """Whether the patch `name` is in effect (not in TOOLCRIB_PATCHES_OFF)."""
    return name not in settings.TOOLCRIB_PATCHES_OFF
