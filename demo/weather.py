"""Weather and sentiment: the seed's "weather_sentiment_agent" example.

Reproduces the ADK tools docs example where the instruction names the tools and tells
the agent what to do with each tool's status. With the offline model, type:

- ``weather in london?`` (or ``paris``): calls ``get_weather_report(city="london")``
  and answers with the report; any other city answers with the "not available" error.
- ``I don't like rain`` / ``that's good``: calls ``analyze_sentiment`` with the whole
  text and acknowledges the sentiment.
"""

from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool

INSTRUCTION = """You are a helpful assistant that provides weather information and analyzes the sentiment of user feedback.
**If the user asks about the weather in a specific city, use the 'get_weather_report' tool to retrieve the weather details.**
**If the 'get_weather_report' tool returns a 'success' status, provide the weather report to the user.**
**If the 'get_weather_report' tool returns an 'error' status, inform the user that the weather information for the specified city is not available and ask if they have another city in mind.**
**After providing a weather report, if the user gives feedback on the weather (e.g., 'That's good' or 'I don't like rain'), use the 'analyze_sentiment' tool to understand their sentiment.** Then, briefly acknowledge their sentiment.
You can handle these tasks sequentially if needed."""  # noqa: E501


def get_weather_report(city: str) -> dict:
    """Retrieves the current weather report for a specified city.

    Args:
        city: The name of the city, e.g. "London".

    Returns:
        dict: A dictionary containing the weather information with a 'status' key
        ('success' or 'error') and a 'report' key with the weather details if
        successful, or an 'error_message' if an error occurred.
    """
    if city.lower() == "london":
        return {
            "status": "success",
            "report": (
                "The current weather in London is cloudy with a temperature of "
                "18 degrees Celsius and a chance of rain."
            ),
        }
    if city.lower() == "paris":
        return {
            "status": "success",
            "report": (
                "The weather in Paris is sunny with a temperature of 25 degrees Celsius."
            ),
        }
    return {
        "status": "error",
        "error_message": f"Weather information for '{city}' is not available.",
    }


def analyze_sentiment(text: str) -> dict:
    """Analyzes the sentiment of the given text.

    Args:
        text: The user's feedback, as they wrote it.

    Returns:
        dict: A dictionary with 'sentiment' ('positive', 'negative', or 'neutral')
        and a 'confidence' score.
    """
    lowered = text.lower()
    if "good" in lowered or "sunny" in lowered:
        return {"sentiment": "positive", "confidence": 0.8}
    if "rain" in lowered or "bad" in lowered:
        return {"sentiment": "negative", "confidence": 0.7}
    return {"sentiment": "neutral", "confidence": 0.6}


weather_sentiment = LlmAgent(
    name="weather_sentiment_agent",
    description="Gives the weather in a city and acknowledges how you feel about it.",
    instruction=INSTRUCTION,
    tools=[FunctionTool(get_weather_report), FunctionTool(analyze_sentiment)],
)

# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "weather_sentiment": [
        "What's the weather in London?",
        "Weather in Paris?",
        "I don't like rain",
    ],
}
