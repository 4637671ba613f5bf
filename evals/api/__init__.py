"""The evals API: eval sets and cases (sets), their runs and results (runs.py)."""
