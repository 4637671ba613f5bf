"""Running an eval set: a run's cases, each in a hidden session as its user, its
turns through the same queue, workers, governance and audit as anyone's
(`runs.py`, `cases.py`); tools answered from the case's recorded results
(`replay.py`); where the run's driver runs (`dispatch.py`, `tasks.py`)."""
