"""The weather agent bench.vs_adk runs on both servers: the same code on each.

ADK's `adk api_server bench/adk_app` loads it as `weather.agent.root_agent`;
Toolcrib registers it as `bench.adk_app.weather.agent.bench_weather` (through
TOOLCRIB_EXTRA_AGENTS). One turn: the user's message, two tool calls one after
the other, a final answer (five events after the user's own), on the offline
model, so both servers run identical, deterministic work.
"""

from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool

from agents.adk.offline import OfflineLlm, OfflineStep
from demo.weather import get_weather_report

MESSAGE = "weather in london and paris?"
ANSWER = "London is cloudy at 18 degrees; Paris is sunny at 25 degrees."

bench_weather = LlmAgent(
    name="bench_weather",
    description="Gives the weather in London and Paris.",
    instruction="Use get_weather_report for each city the user names.",
    model=OfflineLlm(
        model="offline/bench",
        script=[
            OfflineStep.call("get_weather_report", city="london"),
            OfflineStep.call("get_weather_report", city="paris"),
            OfflineStep.say(ANSWER),
        ],
    ),
    tools=[FunctionTool(get_weather_report)],
)
root_agent = bench_weather
