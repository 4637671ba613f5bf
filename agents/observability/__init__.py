"""Per-run traces: the process's OpenTelemetry setup, the turn's spans kept in
memory and stored as RunSpan rows, and the read side for the trace API."""
