"""Sources of agent modules an operator might list in TOOLCRIB_EXTRA_AGENTS, good and
broken; the `code_module` fixture writes one where imports find it."""

GOOD = """
from google.adk.agents import LlmAgent

assistant = LlmAgent(name="assistant", description="Helps.", instruction="Help.")
"""

# Each broken source, with what its error must say.
RAISES = (
    "raise RuntimeError('WEATHER_API_KEY is not set')\n",
    "RuntimeError: WEATHER_API_KEY is not set",
)
SYNTAX = ("def helper(:\n    pass\n", "SyntaxError: ")
IMPORTS = (
    "import toolcrib_no_such_package\n",
    "ModuleNotFoundError: No module named 'toolcrib_no_such_package'",
)
NOT_AN_AGENT = ("helper = 42\n", "is not an ADK agent")
BROKEN = {
    "raises": RAISES,
    "syntax": SYNTAX,
    "imports": IMPORTS,
    "not_an_agent": NOT_AN_AGENT,
}
