"""The cyclic garbage collector, set once for a long-running server process.

A turn allocates many short-lived containers: ADK copies every content of the
session's window into each model request, and pydantic and the ORM build objects
for every event. With Python's default thresholds (700, 10, 10) the collector ran
so often, and walked so much, that it took about a fifth of a Celery worker's CPU
at 32 turns at once (perf, bench/README.md "Production and embedded: the garbage collector"):
full collections walked the whole heap, some 445,000 tracked objects and 200 ms
each, nearly all of them modules, classes and schemas loaded at start-up that never
become garbage.

`tune()` runs once a process has loaded its code (project/asgi.py for Daphne and
the embedded server, and so for any process that imports it, the test suite's too;
a Celery worker's `worker_init`, before a prefork pool forks):

- the thresholds of TOOLCRIB_GC_THRESHOLDS (20000, 20, 10 unless set): a turn's
  temporaries mostly die before the youngest generation is collected, so fewer are
  promoted to the older ones and full collections come less often;
- with TOOLCRIB_GC_FREEZE (on unless set off), a collection, then `gc.freeze()`:
  what start-up loaded moves to the permanent generation, which no collection
  walks. Cycles are still collected; only start-up's objects are never looked at
  again.
"""

import gc

from django.conf import settings


def tune() -> None:
    """Set the collector's thresholds and freeze what start-up loaded (see above)."""
    if settings.TOOLCRIB_GC_THRESHOLDS:
        gc.set_threshold(*settings.TOOLCRIB_GC_THRESHOLDS)
    if settings.TOOLCRIB_GC_FREEZE:
        gc.collect()  # start-up's garbage is not kept for good
        gc.freeze()
