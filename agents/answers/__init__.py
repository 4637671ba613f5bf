"""Answers: a person's (or trusted code's) answer to a request, and the sweeps that
answer for nobody (expiry) or for a standing approval, each resuming the agent
through agents.turns.start. Above the turns and the requests (agents.requests:
a request recorded, read, rung and ended), which a turn itself imports."""
