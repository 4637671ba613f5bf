"""Retention: what is older than a team keeps, removed on a schedule (docs/retention.md).

- `jobs.py`: the run of the job (`apply_retention`, `plan_retention`), the jobs
  it runs, named in TOOLCRIB_RETENTION_JOBS (the audit's comes from toolsets, which
  the runtime never imports), and what a job is told and reports;
- `sessions.py`: sessions whose last activity is older than their agent's days,
  each removed whole, and the gateway's ended requests;
- `lease.py`: one run at a time, across processes and machines, by a database row;
- `archive.py`: what a run removes, written first to a gzipped JSON Lines file;
- `schedule.py` and `tasks.py`: every TOOLCRIB_RETENTION_SECONDS, on a thread of
  the server that runs turns inline, or by Celery beat.
"""
