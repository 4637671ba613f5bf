"""Jobs one process at a time may run, across every process and machine."""

from django.db import models


class Lease(models.Model):
    """A job that one process at a time may run, across every process and machine:
    the holder claims the row by a conditional UPDATE and renews it while it works;
    a holder that died loses it when `expires_at` passes (agents.retention.lease)."""

    name = models.CharField(primary_key=True, max_length=64)
    holder = models.CharField(max_length=128, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.name} held by {self.holder or 'nobody'}"
