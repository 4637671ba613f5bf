"""The accounts' door for the apps above agents: what every request of a
signed-in account passes (account_checks), API tokens read and revoked, and a
switched-off account's access ended everywhere at once (end_access).

Part of agents' public door (agents.runtime says which modules it is).
"""

from asgiref.sync import async_to_sync
from django.contrib.auth.models import AbstractBaseUser

from agents import account_checks
from agents.doorbell import streams
from agents.tokens import revoke_tokens, user_for_token

__all__ = ["account_checks", "end_access", "revoke_tokens", "user_for_token"]


def end_access(*, user: AbstractBaseUser) -> int:
    """End what the runtime holds open for a user switched off: her API tokens are
    revoked and her open sockets closed (4401). How many tokens there were.

    Call it once her `is_active` is False and committed: her web sessions end with
    it (Django's backends refuse an inactive user), and a socket that reconnects
    is refused by the same check."""
    revoked = revoke_tokens(user=user)
    async_to_sync(streams.apublish_account_closed)(user.pk)
    return revoked
