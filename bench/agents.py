"""Agents the benchmarks register (through TOOLCRIB_EXTRA_AGENTS)."""

from google.adk.agents import LlmAgent

from agents.adk.offline import OfflineLlm, OfflineStep


def tick(step: int) -> dict:
    """Count one step.

    Args:
        step: The step number.
    """
    return {"step": step}


def chatty_agent(steps: int) -> LlmAgent:
    """An agent whose turn makes 2 * steps + 2 ADK events (calls, results, text)."""
    script = [OfflineStep.call("tick", step=i) for i in range(steps)]
    return LlmAgent(
        name=f"chatty_{steps}",
        description=f"Calls tick {steps} times.",
        instruction="Call tick.",
        model=OfflineLlm(
            model="offline/bench", script=[*script, OfflineStep.say("done")]
        ),
        tools=[tick],
    )


chatty_25 = chatty_agent(25)
chatty_100 = chatty_agent(100)
