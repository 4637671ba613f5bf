"""Agents only the integration tests register (through TOOLCRIB_EXTRA_AGENTS)."""

import time

from google.adk.agents import LlmAgent

SLOW_SECONDS = 3.0


def get_slow_weather_report(city: str) -> dict:
    """Retrieves the weather report for a city, slowly.

    Args:
        city: The city to report on.
    """
    time.sleep(SLOW_SECONDS)
    return {"status": "success", "report": f"It is mild in {city}."}


slow_weather = LlmAgent(
    name="slow_weather",
    description="Reports the weather, slowly.",
    instruction="If the user asks about the weather, use get_slow_weather_report.",
    tools=[get_slow_weather_report],
)


SOAK_SECONDS = 0.6


def get_weather_report_soon(city: str) -> dict:
    """Retrieves the weather report for a city, in a moment.

    Args:
        city: The city to report on.
    """
    time.sleep(SOAK_SECONDS)
    return {"status": "success", "report": f"It is mild in {city}."}


# The soak's agent (test_soak.py): turns long enough for faults to meet them mid-way.
soak_weather = LlmAgent(
    name="soak_weather",
    description="Reports the weather, in a moment.",
    instruction="If the user asks about the weather, use get_weather_report_soon.",
    tools=[get_weather_report_soon],
)
