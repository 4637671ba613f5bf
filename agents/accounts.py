"""The accounts' door for the apps above agents: what every request of a
signed-in account passes (account_checks), and API tokens read and revoked.

Part of agents' public door (agents.runtime says which modules it is).
"""

from agents import account_checks
from agents.tokens import revoke_tokens, user_for_token

__all__ = ["account_checks", "revoke_tokens", "user_for_token"]
