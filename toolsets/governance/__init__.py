"""Governance: one ADK plugin running an ordered list of checks on every model step
and every tool call (plugin.py, checks.py), the policies around a call's run
(policies.py, execution.py), and what it keeps for one turn (turn.py)."""
