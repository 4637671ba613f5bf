"""An invitation to make an account: a link staff hand or mail to a newcomer."""

from django.conf import settings
from django.db import models


class Invite(models.Model):
    """One link that makes one account, once, before it expires.

    Only a SHA-256 digest of the link's token is kept: a copy of the database opens
    no invitation. What the account gets (staff or not, its groups) is fixed here by
    staff; the invitee chooses only her username and password.
    """

    digest = models.CharField(max_length=64, unique=True)
    email = models.EmailField(blank=True, help_text="Where the link was mailed.")
    is_staff = models.BooleanField(default=False)
    groups = models.ManyToManyField("auth.Group", blank=True, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"invite {self.pk}"
