"""Scores of an eval case: its tool trajectory and final response against the
case's (ADK's metrics, `trajectory.py`, `response.py`), and its governance
expectations against the audit of its session (`expectations.py`)."""
