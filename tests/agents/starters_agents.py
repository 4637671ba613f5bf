"""Code agents for tests/agents/api/test_starters.py: starters declared badly, and none."""

from google.adk.agents import LlmAgent

badly_started = LlmAgent(name="badly_started", instruction="Help.")
unstarted = LlmAgent(name="unstarted", instruction="Help.")

# A prompt must be one line: the whole list is dropped, the agent still loads.
STARTERS = {"badly_started": ["Fine", "two\nlines"]}
