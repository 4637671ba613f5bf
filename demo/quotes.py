"""A tool that needs your API key: ADK's `request_credential`, kept sealed per user.

``get_stock_quote`` calls a (pretend) market data API that wants an API key. The
first time, it has none: it calls ``tool_context.request_credential(QUOTES_API)``
and the turn pauses with an ``auth_request`` event. You answer once
(``GET /api/auth-requests/?status=pending``, then
``POST /api/auth-requests/{id}/answer/`` ``{"api_key": "..."}``, or a ``credential``
frame on the session socket); the tool runs again and reads the key with
``get_auth_response``. Later sessions find the key with ``load_credential`` and do
not ask, until you revoke it (``DELETE /api/credentials/{id}/``).

The key itself never shows: not in events, logs, the audit or the API. The tool
proves it has it by naming its last four characters, masked.
"""

from fastapi.openapi.models import APIKey, APIKeyIn
from google.adk.agents import LlmAgent
from google.adk.auth.auth_credential import AuthCredential, AuthCredentialTypes
from google.adk.auth.auth_schemes import AuthScheme
from google.adk.auth.auth_tool import AuthConfig
from google.adk.tools import ToolContext

PRICES = {"ACME": 123.45, "GLOBEX": 67.8, "INITECH": 9.99}


def quotes_api() -> AuthConfig:
    """What the market data API asks for: an API key in the X-Api-Key header."""
    scheme: AuthScheme = APIKey(**{"in": APIKeyIn.header, "name": "X-Api-Key"})
    return AuthConfig(
        auth_scheme=scheme,
        raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY),
        credential_key="demo_quotes_api_key",
    )


def masked(key: str) -> str:
    """The key as a user may see it: its last four characters, the rest hidden."""
    return "****" + key[-4:]


async def get_stock_quote(symbol: str, tool_context: ToolContext) -> dict:
    """The latest price of a stock, from a market data API that needs your API key.

    Args:
        symbol: The stock's ticker symbol, e.g. "ACME".
    """
    config = quotes_api()
    credential = tool_context.get_auth_response(config) or (
        await tool_context.load_credential(config)
    )
    if credential is None or not credential.api_key:
        tool_context.request_credential(config)
        return {"status": "pending", "message": "Waiting for your API key."}
    price = PRICES.get(symbol.strip().upper())
    key = masked(credential.api_key)
    if price is None:
        return {"status": "error", "message": f"No quote for {symbol} (key {key})."}
    return {"status": "success", "message": f"{symbol} is at {price} (key {key})."}


quotes = LlmAgent(
    name="quotes",
    description="Looks up stock prices with your market data API key.",
    instruction="When the user asks for a stock price or quote, use 'get_stock_quote'.",
    tools=[get_stock_quote],
)

# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "quotes": [
        'Stock quote for "ACME"',
        'Stock price of "GLOBEX"',
    ],
}
