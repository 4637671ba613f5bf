"""The evals REST edge (DRF), the only package of evals that imports it: eval sets and
cases (sets.py), their runs and results (runs.py)."""
