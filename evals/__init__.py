"""Eval sets and their runs: cases made from real sessions, written by hand or
imported from ADK's `.evalset.json`, run as a person under the team's governance
and scored (docs/evals.md)."""
