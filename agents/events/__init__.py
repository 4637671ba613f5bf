"""Events: wire is the pydantic wire schema every client sees; log records Toolcrib's
own events and publishes them, and reads what a client missed (events after a seq)."""
